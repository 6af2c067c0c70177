// The CLI hands each command its context: `--verbose` reaches `dplab check`, which then shows
// the command output under an error, and leaves it out without the flag.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyEnv, useDoubles, writeKubeconfig, type Doubles } from '../test/fixtures/doubles.ts';
import { main } from './cli.ts';
import { kubeconfigPath } from './catalogue/modes.ts';

let doubles: Doubles;
let restore: () => void;

beforeEach(() => {
  // kubectl cannot reach the cluster: an error result whose details are the failed command.
  doubles = useDoubles({
    rules: [
      {
        tool: 'kubectl',
        stderr: 'The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?\n',
        exit: 1,
      },
    ],
  });
  restore = applyEnv(doubles.env);
  writeKubeconfig('iptables');
});
afterEach(() => {
  restore();
  doubles.cleanup();
});

async function check(...flags: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const sink = { write: (t: string) => (out += t) };
  const code = await main(['check', 'first-service', 'deploy-web', '--mode', 'iptables', ...flags], { stdout: sink, stderr: sink });
  return { code, out };
}

describe('dplab check', () => {
  it('--verbose shows the failed command under the error; without it, only the headline', async () => {
    const plain = await check();
    expect(plain.code).toBe(3);
    expect(plain.out).toContain('The iptables cluster is not reachable');
    expect(plain.out).not.toContain('    | ');
    const verbose = await check('--verbose');
    expect(verbose.code).toBe(3);
    expect(verbose.out).toMatch(/ {4}\| .*kubectl .*get deployments/);
    expect(verbose.out).toMatch(/ {4}\| .*connection to the server 127\.0\.0\.1:6443 was refused/);
  }, 60_000);
});

describe('every command writes through its context', () => {
  /** Runs a command through the CLI with both streams captured; the process's own streams must stay untouched. */
  async function captured(argv: string[]): Promise<{ code: number; out: string; err: string; leaked: string }> {
    let out = '';
    let err = '';
    let leaked = '';
    const stdout = { write: (t: string) => (out += t) };
    const stderr = { write: (t: string) => (err += t) };
    const real = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((t: string | Uint8Array) => ((leaked += String(t)), true)) as typeof process.stdout.write;
    try {
      const code = await main(argv, { stdout, stderr });
      return { code, out, err, leaked };
    } finally {
      process.stdout.write = real;
    }
  }

  it('dplab labs --json: the lab list goes to ctx.stdout, nothing to process.stdout', async () => {
    const r = await captured(['labs', '--json']);
    expect(r.code).toBe(0);
    expect(r.leaked).toBe('');
    const labs = JSON.parse(r.out) as Array<{ id: string }>;
    expect(labs.map((l) => l.id)).toContain('first-service');
  });

  it('dplab kubeconfig iptables: the path goes to ctx.stdout', async () => {
    const r = await captured(['kubeconfig', 'iptables']);
    expect(r.code).toBe(0);
    expect(r.leaked).toBe('');
    expect(r.out).toBe(`${kubeconfigPath('iptables')}\n`);
  });
});

describe('dplab portal --backend', () => {
  async function portal(argv: string[], env: Record<string, string | undefined> = {}): Promise<{ code: number; out: string }> {
    let out = '';
    const sink = { write: (t: string) => (out += t) };
    const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
    Object.assign(process.env, env);
    try {
      const code = await main(['portal', ...argv], { stdout: sink, stderr: sink });
      return { code, out };
    } finally {
      for (const [k, v] of Object.entries(saved))
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
  }

  it('refuses a backend that does not exist, naming the two that do', async () => {
    const r = await portal(['--backend', 'docker']);
    expect(r.code).not.toBe(0);
    expect(r.out).toContain('--backend takes local or kubernetes, got "docker"');
  });

  it('kubernetes: a missing seat setting is an error naming the variable, before anything listens', async () => {
    const r = await portal(['--backend', 'kubernetes', '--port', '0'], { DPLAB_SEAT_NAMESPACE: 'Not_A_Namespace' });
    expect(r.code).not.toBe(0);
    expect(r.out).toContain('DPLAB_SEAT_NAMESPACE');
    expect(r.out).not.toContain('Learners:');
  });

  it('--shared-user is for the local backend only', async () => {
    const r = await portal(['--backend', 'kubernetes', '--shared-user']);
    expect(r.code).not.toBe(0);
    expect(r.out).toContain('--shared-user is for the local backend.');
  });

  it.runIf(process.platform === 'linux' && process.getuid?.() === 0)(
    'local, as root: seats get users of their own, and a state folder they cannot reach is named before anything listens',
    async () => {
      const closed = mkdtempSync(join(tmpdir(), 'dplab-closed-'));
      try {
        const r = await portal(['--port', '0'], { DPLAB_STATE_DIR: closed });
        expect(r.code).not.toBe(0);
        expect(r.out).toContain(
          `Seat users cannot reach ${join(closed, 'portal', 'seats')}: ${closed} is closed to other users (mode 700)`,
        );
        expect(r.out).toContain('--shared-user');
        expect(r.out).not.toContain('Learners:');
      } finally {
        rmSync(closed, { recursive: true, force: true });
      }
    },
  );
});
