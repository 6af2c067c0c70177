// The dashboard is pushed, not polled: a check or a cluster change that happens on a seat's runner
// directly (not through the portal, so nothing tells the portal to look) reaches the workshop's
// state within a second, while every poll of the workshop is set ten minutes apart. One real seat
// runner (local backend) over the cluster test doubles.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { distDir } from '../base/paths.ts';
import { requireLab } from '../labs/registry.ts';
import { healthyRules } from '../../test/fixtures/cluster-scenarios.ts';
import { seatStateFiles, useDoubles, type Doubles } from '../../test/fixtures/doubles.ts';
import { http } from '../../test/fixtures/terminal-client.ts';
import { firstServiceScenario } from '../../test/fixtures/first-service-scenario.ts';
import { labOutline } from './dashboard.ts';
import { LocalSeatBackend } from './local-backend.ts';
import { startPortal, type RunningPortal } from './server.ts';

const NEVER = 600_000;

describe('the dashboard hears from seats by their activity stream', { timeout: 180_000 }, () => {
  let doubles: Doubles | undefined;
  let portal: RunningPortal | undefined;
  let stateDir = '';
  afterAll(async () => {
    if (portal) {
      await portal.workshop.end().catch(() => undefined);
      await portal.close();
    }
    doubles?.cleanup();
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  });

  it('a check and a cluster deleted on the seat itself show within a second, with polling ten minutes apart', async () => {
    doubles = useDoubles({ rules: [...healthyRules('iptables', 's01'), ...firstServiceScenario('iptables').rules] });
    const stateFile = seatStateFiles(doubles, ['s01']).get('s01')!;
    const { DPLAB_STATE_DIR: _own, ...toolEnv } = doubles.env;
    stateDir = mkdtempSync(join(tmpdir(), 'dplab-activity-stream-'));
    const backend = new LocalSeatBackend({ stateDir, seatEnv: () => ({ ...toolEnv, DPLAB_DOUBLE_STATE: stateFile }) });
    portal = await startPortal({
      backend,
      lab: labOutline(requireLab('first-service')),
      siteDir: distDir,
      port: 0,
      seats: 1,
      maxSeats: 1,
      warm: ['iptables'],
      code: `T${randomBytes(4).toString('hex').toUpperCase()}`,
      timing: { activityMs: NEVER, clustersMs: NEVER, reconcileMs: NEVER },
    });
    const workshop = portal.workshop;
    const row = () => workshop.state().seats.find((s) => s.id === 's01');
    const until = async (what: string, ok: () => boolean, withinMs: number) => {
      const end = Date.now() + withinMs;
      while (!ok()) {
        if (Date.now() > end) throw new Error(`${what} not seen within ${withinMs} ms; the row: ${JSON.stringify(row())}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    await until('the seat ready and streaming', () => row()?.phase === 'ready' && workshop.streaming().includes('s01'), 150_000);
    await until('the warm cluster', () => !!row()?.clusters.some((c) => c.mode === 'iptables' && c.state === 'ready'), 5_000);

    // Straight to the seat's runner, with its own token (root reads seat.json in tests).
    const { port, runnerToken } = JSON.parse(readFileSync(join(backend.seatDir('s01'), 'seat.json'), 'utf8')) as {
      port: number;
      runnerToken: string;
    };
    const origin = `http://127.0.0.1:${port}`;
    const headers = { authorization: `Bearer ${runnerToken}`, origin, 'content-type': 'application/json' };
    const checked = await http(origin, '/api/labs/first-service/steps/deploy-web/check', {
      method: 'POST',
      headers,
      body: JSON.stringify({ mode: 'iptables' }),
      timeoutMs: 60_000,
    });
    expect(checked.status).toBe(200);
    const verdict = JSON.parse(checked.body) as { status: string; message: string };
    expect(verdict.status, verdict.message).toBe('fail');
    const answered = Date.now();
    await until('the failing check on the dashboard', () => row()?.steps.find((c) => c.step === 'deploy-web')?.status === 'failing', 1_000);
    expect(Date.now() - answered).toBeLessThan(1_000);

    const deleted = await http(origin, '/api/clusters/iptables', { method: 'DELETE', headers, timeoutMs: 60_000 });
    expect(deleted.status).toBe(200);
    await until(
      'the deleted cluster on the dashboard',
      () => !!row()?.clusters.some((c) => c.mode === 'iptables' && c.state === 'absent'),
      1_000,
    );
  });
});
