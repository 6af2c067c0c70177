/** kubectl for everyone; the cilium CLI or helm for the Cilium mode. */
import { devNull } from 'node:os';
import { CommandError, run, TIMEOUTS } from '../base/exec.ts';
import type { Mode } from '../catalogue/modes.ts';
import type { Finding } from './types.ts';

/** First line of a tool's version output, or the reason it is unusable. */
async function probe(
  file: string,
  args: string[],
  signal?: AbortSignal,
): Promise<{ ok: true; text: string } | { ok: false; err: CommandError }> {
  try {
    const r = await run(file, args, { timeoutMs: TIMEOUTS.quick, signal });
    return { ok: true, text: (r.stdout.trim() || r.stderr.trim()).split('\n')[0].slice(0, 120) };
  } catch (err) {
    if (!(err instanceof CommandError) || err.kind === 'aborted') throw err;
    return { ok: false, err };
  }
}

export async function checkKubectl(signal?: AbortSignal): Promise<Finding> {
  // An empty kubeconfig: even a version check must not read ~/.kube/config.
  const r = await probe('kubectl', ['version', '--client', '--kubeconfig', devNull], signal);
  if (r.ok) return { id: 'kubectl', title: 'kubectl', status: 'ok', detail: r.text };
  return {
    id: 'kubectl',
    title: 'kubectl',
    status: 'fail',
    detail: r.err.kind === 'tool-missing' ? 'kubectl is not installed: `kubectl` was not found on PATH.' : r.err.message,
    fix: r.err.fix ?? 'Install kubectl: https://kubernetes.io/docs/tasks/tools/',
  };
}

/** Which installer the Cilium mode will use: the cilium CLI when present, else helm. */
export type CiliumInstaller = 'cilium' | 'helm';

export async function checkCiliumInstaller(signal?: AbortSignal): Promise<{ finding: Finding; installer?: CiliumInstaller }> {
  const cli = await probe('cilium', ['version', '--client'], signal);
  if (cli.ok)
    return {
      installer: 'cilium',
      finding: { id: 'cilium-installer', title: 'cilium CLI or helm', status: 'ok', detail: `cilium CLI: ${cli.text}` },
    };
  const helm = await probe('helm', ['version', '--short'], signal);
  if (helm.ok)
    return {
      installer: 'helm',
      finding: {
        id: 'cilium-installer',
        title: 'cilium CLI or helm',
        status: 'ok',
        detail: `helm ${helm.text} (the cilium CLI is not installed; helm installs Cilium instead)`,
      },
    };
  return {
    finding: {
      id: 'cilium-installer',
      title: 'cilium CLI or helm',
      status: 'fail',
      detail: 'The Cilium mode needs the cilium CLI or helm; neither works here.',
      fix: 'Install the cilium CLI (https://docs.cilium.io/en/stable/gettingstarted/k8s-install-default/#install-the-cilium-cli) or helm (https://helm.sh/docs/intro/install/).',
    },
  };
}

export function needsCilium(modes: readonly Mode[]): boolean {
  return modes.includes('cilium');
}
