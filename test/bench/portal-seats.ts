/**
 * A class arriving at once: `dplab bench portal-seats [N] [--pool]` starts a portal on the local seat
 * backend over the cluster test doubles (no Docker: `kind create` answers at once, so this
 * measures the portal and the seat runners, not kind), has N learners (30) join together with
 * a warm iptables cluster per seat (made on join, or with --pool before anyone joins, reported
 * as portal-seats-pool), and measures
 *   - join → seat ready, per seat (p50, p95), beside one bare `dplab serve` start (the limit);
 *   - a Check through the portal → the dashboard's event stream showing it (p50, p95), beside
 *     the dashboard's poll interval (what it would be without the refresh a check triggers);
 *   - the same check made on a seat's runner directly → the dashboard, which only the seat's
 *     activity stream can bring so soon (p95, beside the poll interval);
 *   - each seat runner's resident memory, beside a bare runner's and the memory `dplab doctor` budgets per cluster.
 * Asserts nothing; prints the figures.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { distDir } from '../../scripts/base/paths.ts';
import { requireLab } from '../../scripts/labs/registry.ts';
import { LocalSeatBackend } from '../../scripts/portal/local-backend.ts';
import { startPortal } from '../../scripts/portal/server.ts';
import { WORKSHOP_TIMING } from '../../scripts/portal/workshop.ts';
import { MEMORY_PER_CLUSTER_BYTES } from '../../scripts/preflight/memory.ts';
import type { DashboardState } from '../../scripts/wire/portal.ts';
import { healthyRules } from '../fixtures/cluster-scenarios.ts';
import { seatStateFiles, useDoubles } from '../fixtures/doubles.ts';
import { firstServiceScenario } from '../fixtures/first-service-scenario.ts';
import { http } from '../fixtures/terminal-client.ts';
import { startRunnerChild } from '../fixtures/runner-child.ts';
import { report } from './lib/report.ts';
import { labOutline } from '../../scripts/portal/dashboard.ts';

const args = process.argv.slice(2);
const SEATS = Number(args.find((a) => /^\d+$/.test(a)) ?? 30);
/** `--pool`: the seats are made (runner and warm cluster) before anyone joins, as `dplab portal --seats N` does. */
const POOL = args.includes('--pool');
const NAME = POOL ? 'portal-seats-pool' : 'portal-seats';
const CHECKS = Math.min(SEATS, 20);
const MiB = 1024 * 1024;

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

const ids = Array.from({ length: SEATS }, (_, i) => `s${String(i + 1).padStart(2, '0')}`);
const doubles = useDoubles({ rules: [...ids.flatMap((s) => healthyRules('iptables', s)), ...firstServiceScenario('iptables').rules] });
const stateFiles = seatStateFiles(doubles, ids);
const { DPLAB_STATE_DIR: _own, ...toolEnv } = doubles.env;
const backend = new LocalSeatBackend({
  stateDir: mkdtempSync(join(tmpdir(), 'dplab-bench-portal-')),
  seatEnv: (id) => ({ ...toolEnv, DPLAB_SHELL_NORC: '1', DPLAB_DOUBLE_STATE: stateFiles.get(id)! }),
});
const lab = requireLab('first-service');
const portal = await startPortal({
  backend,
  lab: labOutline(lab),
  siteDir: distDir,
  port: 0,
  maxSeats: SEATS,
  seats: POOL ? SEATS : 0,
  warm: ['iptables'],
});
const started = performance.now();
const origin = portal.origin;

/** The dashboard's event stream, as the instructor's page reads it. */
function dashboardStream(onState: (s: DashboardState) => void): () => void {
  const req = request(`${origin}/portal/api/events`, { headers: { authorization: `Bearer ${portal.instructorToken}` } }, (res) => {
    let buffer = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffer += chunk;
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const data = buffer
          .slice(0, end)
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('');
        buffer = buffer.slice(end + 2);
        if (data) onState(JSON.parse(data) as DashboardState);
      }
    });
  });
  req.on('error', () => undefined);
  req.end();
  return () => req.destroy();
}

try {
  const process0 = performance.now();
  const bare = await startRunnerChild({ siteDir: distDir, env: toolEnv });
  const bareStartMs = performance.now() - process0;
  await new Promise((r) => setTimeout(r, 1_000));
  const bareRss = rssBytes(bare.pid);
  await bare.stop();

  // A warm pool fills before the class arrives.
  let poolFillMs = NaN;
  if (POOL) {
    for (;;) {
      const seats = portal.workshop.state().seats;
      const failed = seats.find((s) => s.phase === 'failed');
      if (failed) throw new Error(`pool seat ${failed.id} failed: ${failed.message}`);
      if (seats.length === SEATS && seats.every((s) => s.phase === 'ready')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    poolFillMs = performance.now() - started;
  }

  // Everyone joins at once; each polls their banner route until the seat is ready.
  const joinToReady: number[] = [];
  const learners = await Promise.all(
    ids.map(async (_, i) => {
      const t0 = performance.now();
      const r = await http(origin, '/portal/api/join', {
        method: 'POST',
        headers: { origin, 'content-type': 'application/json' },
        body: JSON.stringify({ code: portal.code, name: `Learner ${i + 1}` }),
        timeoutMs: 120_000,
      });
      if (r.status !== 200) throw new Error(`join ${i}: ${r.status} ${r.body}`);
      const { token, seat } = JSON.parse(r.body) as { token: string; seat: string };
      for (;;) {
        const me = JSON.parse(
          (await http(origin, '/portal/api/me', { headers: { authorization: `Bearer ${token}` }, timeoutMs: 120_000 })).body,
        );
        if (me.phase === 'ready') break;
        if (me.phase === 'failed') throw new Error(`seat ${seat} failed: ${me.message}`);
        await new Promise((res) => setTimeout(res, 250));
      }
      joinToReady.push(performance.now() - t0);
      return { token, seat };
    }),
  );
  await new Promise((r) => setTimeout(r, 2_000));
  const rss = backend.pids().map(rssBytes);

  // A check through the portal, and the moment the dashboard's stream shows its cell failing.
  let latest: DashboardState | undefined;
  const waiters = new Set<() => void>();
  const stop = dashboardStream((s) => {
    latest = s;
    waiters.forEach((w) => w());
  });
  const shows = (seat: string, streak: number) =>
    new Promise<number>((resolve) => {
      const look = () => {
        const cell = latest?.seats.find((s) => s.id === seat)?.steps.find((c) => c.step === 'deploy-web');
        if (cell?.status === 'failing' && cell.failStreak >= streak) {
          waiters.delete(look);
          resolve(performance.now());
        }
      };
      waiters.add(look);
      look();
    });
  const afterAnswer: number[] = [];
  const fromClick: number[] = [];
  for (const l of learners.slice(0, CHECKS)) {
    const seen = shows(l.seat, 1);
    const t0 = performance.now();
    const r = await http(origin, '/api/labs/first-service/steps/deploy-web/check', {
      method: 'POST',
      headers: { authorization: `Bearer ${l.token}`, origin, 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'iptables' }),
      timeoutMs: 120_000,
    });
    const answered = performance.now();
    if (JSON.parse(r.body).status !== 'fail') throw new Error(`check in ${l.seat}: ${r.body}`);
    const at = await seen;
    afterAnswer.push(at - answered);
    fromClick.push(at - t0);
  }
  // The same check made on the seat's runner itself (a learner's `curl`, or a check the portal did
  // not forward): nothing tells the portal to look, so only the seat's activity stream brings it.
  const direct: number[] = [];
  for (const l of learners.slice(0, CHECKS)) {
    const { port, runnerToken } = JSON.parse(readFileSync(join(backend.seatDir(l.seat), 'seat.json'), 'utf8')) as {
      port: number;
      runnerToken: string;
    };
    const seat = `http://127.0.0.1:${port}`;
    const seen = shows(l.seat, 2);
    const r = await http(seat, '/api/labs/first-service/steps/deploy-web/check', {
      method: 'POST',
      headers: { authorization: `Bearer ${runnerToken}`, origin: seat, 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'iptables' }),
      timeoutMs: 120_000,
    });
    const answered = performance.now();
    if (JSON.parse(r.body).status !== 'fail') throw new Error(`direct check in ${l.seat}: ${r.body}`);
    direct.push((await seen) - answered);
  }
  const streaming = portal.workshop.streaming().length;
  stop();

  const how = POOL ? 'from a warm pool' : 'made on join';
  report(NAME, [
    ...(POOL ? [{ measure: `warm pool of ${SEATS} filled (portal start → every seat ready)`, unit: 'ms', ours: poolFillMs }] : []),
    {
      measure: `join → seat ready (runner + warm cluster on doubles, ${how}), p50 of ${SEATS} at once`,
      unit: 'ms',
      ours: quantile(joinToReady, 0.5),
      limit: { name: 'one bare dplab serve start', value: bareStartMs },
    },
    {
      measure: `join → seat ready (${how}), p95 of ${SEATS} at once`,
      unit: 'ms',
      ours: quantile(joinToReady, 0.95),
      limit: { name: 'one bare dplab serve start', value: bareStartMs },
      goal: { text: '≤ 120 s for a class of 30 on doubles', met: quantile(joinToReady, 0.95) <= 120_000 },
    },
    {
      measure: `check answered → dashboard shows it, p50 of ${CHECKS}`,
      unit: 'ms',
      ours: quantile(afterAnswer, 0.5),
      peer: { name: 'poll interval alone', value: WORKSHOP_TIMING.activityMs },
    },
    {
      measure: `check answered → dashboard shows it, p95 of ${CHECKS}`,
      unit: 'ms',
      ours: quantile(afterAnswer, 0.95),
      peer: { name: 'poll interval alone', value: WORKSHOP_TIMING.activityMs },
      goal: { text: '≤ 1 s', met: quantile(afterAnswer, 0.95) <= 1_000 },
    },
    {
      measure: `check made on the seat's runner itself → dashboard shows it, p95 of ${CHECKS} (${streaming}/${SEATS} seats streaming)`,
      unit: 'ms',
      ours: quantile(direct, 0.95),
      peer: { name: 'poll interval alone', value: WORKSHOP_TIMING.activityMs },
      goal: { text: '≤ 1 s', met: quantile(direct, 0.95) <= 1_000 },
    },
    {
      measure: `Check pressed → dashboard shows it (check included), p95 of ${CHECKS}`,
      unit: 'ms',
      ours: quantile(fromClick, 0.95),
    },
    {
      measure: `seat runner RSS, p50 of ${rss.length}`,
      unit: 'MiB',
      ours: quantile(rss, 0.5) / MiB,
      peer: { name: 'bare dplab serve', value: bareRss / MiB },
      limit: { name: 'one cluster (preflight figure)', value: MEMORY_PER_CLUSTER_BYTES / MiB },
    },
    {
      measure: `seat runner RSS, max of ${rss.length}`,
      unit: 'MiB',
      ours: Math.max(...rss) / MiB,
      peer: { name: 'bare dplab serve', value: bareRss / MiB },
      goal: {
        text: `≤ 10 % of a cluster (${Math.round(MEMORY_PER_CLUSTER_BYTES / 10 / MiB)} MiB)`,
        met: Math.max(...rss) <= MEMORY_PER_CLUSTER_BYTES / 10,
      },
    },
  ]);
} finally {
  await portal.workshop.end();
  await portal.close();
  doubles.cleanup();
}
