/**
 * What a runner terminal starts with: `dplab` on PATH (a shim that runs this checkout's CLI, so
 * the fixes messages name work in the terminal), the lab cluster's KUBECONFIG, and a short prompt.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { nodeShellLaunch, shellLaunch } from './environment.ts';

/** A fresh DPLAB_STATE_DIR for the suite (the rc files and the kubeconfig paths live there); its path. */
function useStateDir(): () => string {
  let state = '';
  const saved = process.env.DPLAB_STATE_DIR;
  beforeAll(() => {
    state = mkdtempSync(join(tmpdir(), 'dplab-env-'));
    process.env.DPLAB_STATE_DIR = state;
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.DPLAB_STATE_DIR;
    else process.env.DPLAB_STATE_DIR = saved;
    rmSync(state, { recursive: true, force: true });
  });
  return () => state;
}

describe('terminal environment', { timeout: 30_000 }, () => {
  const state = useStateDir();

  it('puts a working dplab first on PATH', async () => {
    const launch = shellLaunch('nftables');
    const r = await execa('bash', ['-c', 'command -v dplab && dplab kubeconfig nftables'], {
      env: launch.env,
      cwd: launch.cwd,
      reject: false,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const [where, printed] = r.stdout.trim().split('\n');
    expect(where).toBe(join(state(), 'bin', 'dplab'));
    expect(printed).toBe(launch.env.KUBECONFIG);
    expect(launch.env.KUBECONFIG).toBe(join(state(), 'kube', 'dplab-nftables.yaml'));
  });

  it('gives bash a short prompt: the mode and the folder name, not the path', async () => {
    const launch = shellLaunch('cilium');
    const rc = readFileSync(launch.args[launch.args.indexOf('--rcfile') + 1], 'utf8');
    expect(rc).toContain("PS1='\\[\\e[36m\\](cilium)\\[\\e[0m\\] \\W \\$ '");
    const r = await execa('bash', ['--rcfile', launch.args[launch.args.indexOf('--rcfile') + 1], '-i', '-c', 'echo "${PS1@P}"'], {
      env: { ...launch.env, DPLAB_SHELL_NORC: '1' },
      cwd: launch.cwd,
      reject: false,
    });
    // Strip colour codes and readline's \x01/\x02 markers before reading the prompt.
    // eslint-disable-next-line no-control-regex
    expect(r.stdout.replace(/\x1b\[[0-9;]*m|[\x01\x02]/g, '').trim()).toMatch(/^\(cilium\) workspace [$#]$/);
  });

  it('marks every prompt once, after the learner’s own PROMPT_COMMAND, for the page’s run queue', async () => {
    const launch = shellLaunch('cilium');
    const rcfile = launch.args[launch.args.indexOf('--rcfile') + 1];
    // The learner's rc set a PROMPT_COMMAND of its own: it still runs, and the mark (SHELL_PROMPT_OSC) follows it.
    const r = await execa('bash', ['--rcfile', rcfile, '-i', '-c', 'eval "$PROMPT_COMMAND"'], {
      env: { ...launch.env, DPLAB_SHELL_NORC: '1', PROMPT_COMMAND: 'echo own-prompt-command' },
      cwd: launch.cwd,
      reject: false,
    });
    expect(r.stdout).toBe('own-prompt-command\n\x1b]7702;\x07');
  });

  it('runs a node shell from the argv it is given, with the same environment', () => {
    const launch = nodeShellLaunch('iptables', ['docker', 'exec', '-it', 'dplab-iptables-worker', 'bash']);
    expect([launch.file, ...launch.args]).toEqual(['docker', 'exec', '-it', 'dplab-iptables-worker', 'bash']);
    expect(launch.env.KUBECONFIG).toBe(join(state(), 'kube', 'dplab-iptables.yaml'));
    expect(launch.env.PATH.split(':')[0]).toBe(join(state(), 'bin'));
  });

  it("puts the cluster's own programs (the handle's pathFirst) after dplab and before the rest, in lab and node shells alike", () => {
    const first = ['/sim/shims', '/sim/bin'];
    const rest = process.env.PATH;
    for (const launch of [shellLaunch('iptables', first), nodeShellLaunch('iptables', ['ip', 'netns', 'exec', 'n', 'bash'], first)])
      expect(launch.env.PATH).toBe([join(state(), 'bin'), ...first, rest].join(':'));
    expect(shellLaunch('iptables').env.PATH).toBe([join(state(), 'bin'), rest].join(':'));
    expect(process.env.PATH).toBe(rest);
  });
});

describe('a lab shell without its cluster', { timeout: 30_000 }, () => {
  const state = useStateDir();

  /** `kubectl get pods` in the lab shell as its rc file sets it up; `kubectl` on PATH is a stand-in that says it ran. */
  async function kubectlInLabShell(mode: 'iptables', extraEnv: Record<string, string> = {}) {
    const launch = shellLaunch(mode);
    const bin = mkdtempSync(join(tmpdir(), 'dplab-kubectl-'));
    writeFileSync(join(bin, 'kubectl'), '#!/bin/sh\necho "real kubectl ran: $*"\n', { mode: 0o755 });
    const rcfile = launch.args[launch.args.indexOf('--rcfile') + 1]!;
    const r = await execa('bash', ['--rcfile', rcfile, '-i', '-c', 'kubectl get pods'], {
      env: { ...launch.env, PATH: `${bin}:${launch.env.PATH}`, ...extraEnv },
      cwd: launch.cwd,
      reject: false,
    });
    rmSync(bin, { recursive: true, force: true });
    return r;
  }

  it('says which cluster is missing and how to start it, instead of localhost:8080 errors', async () => {
    const r = await kubectlInLabShell('iptables');
    expect(r.exitCode).toBe(1);
    expect(r.stdout).not.toContain('real kubectl ran');
    expect(r.stderr).toContain('kubectl: the iptables cluster (dplab-iptables) is not running');
    expect(r.stderr).toContain('`dplab up iptables`');
    expect(r.stderr).toContain('`dplab doctor`');
  });

  it('runs the real kubectl once the cluster exists, or when the learner points KUBECONFIG elsewhere', async () => {
    const own = join(state(), 'elsewhere.yaml');
    expect((await kubectlInLabShell('iptables', { KUBECONFIG: own })).stdout).toContain('real kubectl ran: get pods');
    const launch = shellLaunch('iptables');
    mkdirSync(dirname(launch.env.KUBECONFIG!), { recursive: true });
    writeFileSync(launch.env.KUBECONFIG!, 'apiVersion: v1\nkind: Config\n');
    const r = await kubectlInLabShell('iptables');
    expect(r.stdout, r.stderr).toContain('real kubectl ran: get pods');
    expect(r.stderr).not.toContain('is not running');
  });
});
