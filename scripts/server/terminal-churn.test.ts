// Terminals open promptly under churn (issue 36, item 8): a class's pages open and drop lab
// terminals all the time, some leaving jobs running (`sleep … &`, `nohup … &`). Against a real
// runner process over the cluster test doubles, 100 sockets are opened and dropped, 8 at a time,
// while a learner keeps opening a new shell: each must draw its first prompt promptly, the
// cluster's status must not be read once per terminal (every read forks `kind` and `kubectl`),
// and nothing a dropped terminal left running may outlive it.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { healthyRules } from '../../test/fixtures/cluster-scenarios.ts';
import { useDoubles, type Doubles } from '../../test/fixtures/doubles.ts';
import { startRunnerChild, type RunnerChild } from '../../test/fixtures/runner-child.ts';
import { openShell, type Shell } from '../../test/fixtures/terminal-client.ts';
import { SHELL_READY_OSC } from '../wire/terminal.ts';

const SOCKETS = 100;
const AT_ONCE = 8;
/** A busy 2-core machine: before the fix, shells opened during the churn took 2.5–6.1 s (median 3.7). */
const DURING_CHURN_MS = 3_000;
/** Idle again: before, 0.4–0.6 s; after, tens of ms. */
const AFTER_CHURN_MS = 1_000;
const READY = `\x1b]${SHELL_READY_OSC};`;

function processesRunning(marker: string): number {
  let n = 0;
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readFileSync(`/proc/${e}/cmdline`, 'utf8').replace(/\0/g, ' ').includes(marker)) n++;
    } catch {
      // gone
    }
  }
  return n;
}

async function until(what: string, ok: () => boolean, withinMs: number): Promise<void> {
  const end = Date.now() + withinMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`${what} not within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.runIf(process.platform === 'linux')('terminals under churn', { timeout: 240_000 }, () => {
  let doubles: Doubles | undefined;
  let runner: RunnerChild | undefined;
  let site = '';
  afterAll(async () => {
    await runner?.stop();
    doubles?.cleanup();
    if (site) rmSync(site, { recursive: true, force: true });
  });

  it('a new shell draws its first prompt promptly while 100 others open and drop, and nothing they left runs on', async () => {
    doubles = useDoubles({ rules: healthyRules('iptables') }, { initialState: { created: 'yes' } });
    const { DPLAB_STATE_DIR: _own, ...env } = doubles.env;
    site = mkdtempSync(join(tmpdir(), 'dplab-churn-site-'));
    runner = await startRunnerChild({ siteDir: site, env });
    const r = runner;
    const headers = { authorization: `Bearer ${r.token}`, origin: r.origin, host: `127.0.0.1:${r.port}` };
    const query = 'cols=80&rows=24&mode=iptables';
    // Jobs the dropped terminals leave, found again by this number.
    const marker = String(900_000 + (process.pid % 90_000));

    /** Time to the first prompt; a refusal for too many terminals (1013) is tried again, as the page does. */
    const firstPrompt = async (): Promise<number> => {
      const t0 = performance.now();
      for (;;) {
        const s = await openShell(r.port, headers, query);
        if ('refused' in s) throw new Error(`refused ${s.refused}: ${s.body}`);
        const closed = new Promise<'closed'>((ok) => s.ws.once('close', () => ok('closed')));
        const got = await Promise.race([s.waitFor(READY, 60_000).then(() => 'ready' as const), closed]);
        s.close();
        if (got === 'ready') return performance.now() - t0;
        await until('the refused socket closed', () => s.ws.readyState === s.ws.CLOSED, 5_000);
      }
    };
    await firstPrompt(); // warm: the runner's first shell writes its rc files
    const readsBefore = doubles.commandLines().filter((l) => l.startsWith('kind get clusters')).length;

    let next = 0;
    const churn = async () => {
      for (let i = next++; i < SOCKETS; i = next++) {
        const s: Shell | { refused: number } = await openShell(r.port, headers, query);
        if ('refused' in s) continue;
        await until('the ready frame', () => s.control.length > 0 || s.ws.readyState !== s.ws.OPEN, 30_000);
        if (i % 3 === 0) s.type(`sleep ${marker} &\r`);
        if (i % 5 === 0) s.type(`nohup sleep ${marker} >/dev/null 2>&1 &\r`);
        if (i % 2 === 0) await s.waitFor(READY, 10_000).catch(() => undefined);
        s.ws.terminate();
      }
    };
    let churning = true;
    const during: number[] = [];
    // A learner opening a shell after each 20 dropped ones.
    const probe = (async () => {
      for (let at = 20; at < SOCKETS; at += 20) {
        await until(`socket ${at} of the churn`, () => next >= at || !churning, 120_000);
        if (!churning) break;
        during.push(await firstPrompt());
      }
    })();
    await Promise.all(Array.from({ length: AT_ONCE }, churn));
    churning = false;
    await probe;
    const after = [await firstPrompt(), await firstPrompt(), await firstPrompt()];
    const reads = doubles.commandLines().filter((l) => l.startsWith('kind get clusters')).length - readsBefore;
    console.log(
      `first prompt during the churn of ${SOCKETS}: ${during.map(Math.round).join(', ')} ms; after: ${after.map(Math.round).join(', ')} ms; cluster status reads: ${reads}`,
    );

    expect(Math.max(...during), during.map(Math.round).join(', ')).toBeLessThan(DURING_CHURN_MS);
    expect(Math.max(...after), after.map(Math.round).join(', ')).toBeLessThan(AFTER_CHURN_MS);
    // Terminals opened within a second of each other share one read of the cluster's status
    // (before: one read per terminal, each forking `kind` and `kubectl`).
    const opened = SOCKETS + during.length + after.length;
    expect(reads, `${reads} reads for ${opened} terminals`).toBeLessThan(opened / 4);
    // Every job a dropped terminal left (nohup included) ends with it: SIGHUP, then SIGKILL after the grace period.
    await until('the jobs of the dropped terminals gone', () => processesRunning(`sleep ${marker}`) === 0, 15_000);
  });
});
