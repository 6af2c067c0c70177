import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, serveSettings } from './serve.ts';
import { startServer, type RunningServer } from '../server/http.ts';
import { clusterWarmSchema } from '../wire/clusters.ts';

describe('dplab serve --no-warm', () => {
  it('starting ahead is on by default, off with --no-warm or DPLAB_NO_WARM=1', () => {
    expect(serveSettings([], {}).warm).toBe(true);
    expect(serveSettings(['--no-warm'], {}).warm).toBe(false);
    expect(serveSettings([], { DPLAB_NO_WARM: '1' }).warm).toBe(false);
    expect(serveSettings(['--port', '0', '--no-warm', '--build-if-needed'], {})).toMatchObject({
      warm: false,
      port: 0,
      buildIfNeeded: true,
    });
  });

  it('--no-warm takes no value, and the usage names it', () => {
    expect(() => serveSettings(['--no-warm=yes'], {})).toThrow(/dplab serve: /);
    expect(serve.usage).toContain('--no-warm');
  });

  describe('reaches the runner', () => {
    let running: RunningServer | undefined;
    afterEach(() => running?.close());

    it('a runner served with warm: false declines to start a cluster ahead, saying why', async () => {
      const token = `serve-test-${'x'.repeat(24)}`;
      running = await startServer({ port: 0, portExplicit: true, token, siteDir: mkdtempSync(join(tmpdir(), 'site-')), warm: false });
      const origin = `http://127.0.0.1:${running.port}`;
      const res = await fetch(`${origin}/api/clusters/nftables/warm`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, origin, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(res.status).toBe(200);
      expect(clusterWarmSchema.parse(await res.json())).toMatchObject({ outcome: 'declined', reason: 'off' });
    });
  });
});
