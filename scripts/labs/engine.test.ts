/** The engine around a check: polling while evaluate says pending, deadlines, errors vs fails. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ClusterHandle } from '../clusters/handle.ts';
import { CommandError } from '../base/exec.ts';
import { z } from 'zod';
import { defineCheck } from './checks/compose.ts';
import { pollUntil } from './checks/poll.ts';
import { runCheck } from './engine.ts';
import { requireLab } from './registry.ts';
import type { Step } from './schema.ts';

const dir = mkdtempSync(join(tmpdir(), 'dplab-engine-'));
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(kubeconfig, '');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cluster = { mode: 'iptables', name: 'dplab-iptables', kubeconfig } as unknown as ClusterHandle;
const lab = requireLab('first-service');
const withCheck = (check: Step['check']): Step => ({ ...lab.steps[0], check });

describe('runCheck', () => {
  it('polls while the state converges, then reports the settled verdict', async () => {
    let n = 0;
    const step = withCheck(
      defineCheck({
        observations: z.number(),
        gather: async () => ++n,
        evaluate: (ready: number) =>
          ready >= 3
            ? { status: 'pass', message: 'ready', facts: [] }
            : { status: 'fail', message: `${ready} of 3`, facts: [], pending: true },
        settleMs: 5_000,
      }),
    );
    const r = await runCheck(lab, step, 'iptables', { cluster, settleMs: 5_000 });
    expect(r).toMatchObject({ status: 'pass', attempts: 3, observations: 3 });
  }, 10_000);

  it('gives up polling after the settle window and reports the last fail', async () => {
    const step = withCheck(
      defineCheck({
        observations: z.number(),
        gather: async () => 0,
        evaluate: () => ({ status: 'fail', message: 'still starting', facts: [], pending: true }),
      }),
    );
    const r = await runCheck(lab, step, 'iptables', { cluster, settleMs: 300 });
    expect(r.status).toBe('fail');
    expect(r.message).toBe('still starting');
  });

  it('turns infrastructure failures into errors with a fix, and a hung gather into a timeout', async () => {
    const result = { command: 'kubectl get pods', file: 'kubectl', args: [], exitCode: 1, stdout: '', stderr: '', durationMs: 1 };
    const down = withCheck(
      defineCheck({
        observations: z.unknown(),
        gather: async () => Promise.reject(new CommandError('daemon-down', result, 'x', 'Start Docker.')),
        evaluate: () => ({ status: 'pass', message: '', facts: [] }),
      }),
    );
    expect(await runCheck(lab, down, 'iptables', { cluster })).toMatchObject({
      status: 'error',
      message: 'Docker is not running, so the iptables cluster cannot be reached.',
      fix: 'Start Docker.',
    });
    const hung = withCheck(
      defineCheck({
        observations: z.unknown(),
        gather: (ctx) =>
          new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(new CommandError('aborted', result, 'cancelled')))),
        evaluate: () => ({ status: 'pass', message: '', facts: [] }),
      }),
    );
    const r = await runCheck(lab, hung, 'iptables', { cluster, deadlineMs: 200 });
    expect(r.status).toBe('error');
    expect(r.message).toBe('The check timed out before the cluster answered.');
  });
});

describe('pollUntil', () => {
  it('returns the first value that is done, and stops at the deadline otherwise', async () => {
    let i = 0;
    expect(
      await pollUntil(
        async () => ++i,
        (v) => v === 2,
        { timeoutMs: 1_000, intervalMs: 10 },
      ),
    ).toEqual({ value: 2, attempts: 2, timedOut: false });
    const out = await pollUntil(
      async () => 'no',
      () => false,
      { timeoutMs: 50, intervalMs: 10 },
    );
    expect(out.timedOut).toBe(true);
  });
});
