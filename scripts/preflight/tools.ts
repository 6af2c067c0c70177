/** kubectl for everyone, within Kubernetes' supported skew; the cilium CLI or helm for the Cilium mode. */
import { devNull } from 'node:os';
import { CommandError, run, TIMEOUTS } from '../base/exec.ts';
import { KUBERNETES_VERSION } from '../base/versions.ts';
import { CILIUM, runsAgent, type Mode } from '../catalogue/modes.ts';
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

/** `Client Version: v1.33.4` → 33 (the minor), or undefined when the line says no version. */
function kubectlMinor(text: string): { major: number; minor: number } | undefined {
  const m = /v(\d+)\.(\d+)\./.exec(text);
  return m ? { major: Number(m[1]), minor: Number(m[2]) } : undefined;
}

/**
 * kubectl works with API servers one minor release either side of its own (Kubernetes' version
 * skew policy); the clusters run KUBERNETES_VERSION.
 */
export function kubectlFinding(text: string): Finding {
  const base = { id: 'kubectl', title: 'kubectl' };
  const [major, minor] = KUBERNETES_VERSION.split('.').map(Number);
  const v = kubectlMinor(text);
  if (!v)
    return {
      ...base,
      status: 'warn',
      detail: `${text} (could not read its version)`,
      fix: `Use kubectl 1.${minor - 1} to 1.${minor + 1}.`,
    };
  if (v.major === major && Math.abs(v.minor - minor) <= 1) return { ...base, status: 'ok', detail: text };
  return {
    ...base,
    status: 'warn',
    detail: `${text}: the clusters run Kubernetes v${KUBERNETES_VERSION}, and kubectl is supported only within one minor release of the server (1.${minor - 1} to 1.${minor + 1}).`,
    fix: `Install kubectl 1.${minor} (https://kubernetes.io/docs/tasks/tools/), or put one first on PATH for the course.`,
  };
}

export async function checkKubectl(signal?: AbortSignal): Promise<Finding> {
  // An empty kubeconfig: even a version check must not read ~/.kube/config.
  const r = await probe('kubectl', ['version', '--client', '--kubeconfig', devNull], signal);
  if (r.ok) return kubectlFinding(r.text);
  return {
    id: 'kubectl',
    title: 'kubectl',
    status: 'fail',
    detail: r.err.kind === 'tool-missing' ? 'kubectl is not installed: `kubectl` was not found on PATH.' : r.err.message,
    fix: r.err.fix ?? 'Install kubectl: https://kubernetes.io/docs/tasks/tools/',
  };
}

/** The modes whose cluster needs Cilium's installer: those whose agent is Cilium. */
const runsCilium = (mode: Mode) => runsAgent(mode, CILIUM);

/** Which installer the Cilium mode will use: the cilium CLI when present, else helm. */
export type CiliumInstaller = 'cilium' | 'helm';

/**
 * Only the Cilium mode needs an installer: asked for it alone (its cluster is about to start,
 * or `doctor --mode cilium`), a missing one must be fixed; asked with other modes, it is a
 * warning that names the one mode it stops.
 */
export async function checkCiliumInstaller(
  modes: readonly Mode[],
  signal?: AbortSignal,
): Promise<{ finding: Finding; installer?: CiliumInstaller }> {
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
      status: modes.every(runsCilium) ? 'fail' : 'warn',
      detail: `The Cilium mode needs the cilium CLI or helm; neither works here.${modes.some((m) => !runsCilium(m)) ? ' The other modes do not need them.' : ''}`,
      fix: 'Install the cilium CLI (https://docs.cilium.io/en/stable/gettingstarted/k8s-install-default/#install-the-cilium-cli) or helm (https://helm.sh/docs/intro/install/).',
    },
  };
}

export function needsCilium(modes: readonly Mode[]): boolean {
  return modes.some(runsCilium);
}
