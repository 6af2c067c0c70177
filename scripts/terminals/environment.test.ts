/**
 * What a runner terminal starts with: `dplab` on PATH (a shim that runs this checkout's CLI, so
 * the fixes messages name work in the terminal), the lab cluster's KUBECONFIG, and a short prompt.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { nodeShellLaunch, shellLaunch } from './environment.ts';

describe('terminal environment', { timeout: 30_000 }, () => {
  let state: string;
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

  it('puts a working dplab first on PATH', async () => {
    const launch = shellLaunch('nftables');
    const r = await execa('bash', ['-c', 'command -v dplab && dplab kubeconfig nftables'], {
      env: launch.env,
      cwd: launch.cwd,
      reject: false,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const [where, printed] = r.stdout.trim().split('\n');
    expect(where).toBe(join(state, 'bin', 'dplab'));
    expect(printed).toBe(launch.env.KUBECONFIG);
    expect(launch.env.KUBECONFIG).toBe(join(state, 'kube', 'dplab-nftables.yaml'));
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

  it('runs a node shell from the argv it is given, with the same environment', () => {
    const launch = nodeShellLaunch('iptables', ['docker', 'exec', '-it', 'dplab-iptables-worker', 'bash']);
    expect([launch.file, ...launch.args]).toEqual(['docker', 'exec', '-it', 'dplab-iptables-worker', 'bash']);
    expect(launch.env.KUBECONFIG).toBe(join(state, 'kube', 'dplab-iptables.yaml'));
    expect(launch.env.PATH.split(':')[0]).toBe(join(state, 'bin'));
  });
});
