// The Relay snippet runs its commands in the order the learner needs: Relay enabled (the cilium
// CLI waits for it), then the port-forward in the background, then `hubble observe`. Run in a
// real shell against stand-ins that log what happened when.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RELAY_OBSERVE } from './lab.ts';

function stub(dir: string, name: string, body: string): void {
  writeFileSync(join(dir, name), `#!/bin/sh\nLOG="${join(dir, 'log')}"\n${body}\n`);
  chmodSync(join(dir, name), 0o755);
}

describe('cilium-kpr Relay snippet', () => {
  it('observes only after Relay is enabled and the port-forward has started', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dplab-relay-'));
    try {
      // `cilium hubble enable` takes a while (it waits for Relay); the port-forward keeps running.
      stub(
        dir,
        'cilium',
        'case "$2" in enable) /bin/sleep 0.3; echo enabled >> "$LOG";; port-forward) echo port-forward >> "$LOG"; exec /bin/sleep 1 >/dev/null 2>&1;; esac',
      );
      // The snippet's own pause, which gives the port-forward time to listen, ends as soon as the
      // port-forward has started (or after 5 s, as the real one does) instead of always 5 s.
      stub(dir, 'sleep', 'i=0; while [ $i -lt 100 ] && ! grep -q port-forward "$LOG"; do /bin/sleep 0.05; i=$((i+1)); done');
      stub(
        dir,
        'hubble',
        'grep -q enabled "$LOG" && grep -q port-forward "$LOG" && echo observe-after-relay >> "$LOG" || echo observe-too-early >> "$LOG"',
      );
      for (const sh of ['sh', 'bash']) {
        writeFileSync(join(dir, 'log'), '');
        execFileSync(sh, ['-c', RELAY_OBSERVE], { env: { ...process.env, PATH: `${dir}:${process.env.PATH}` }, timeout: 20_000 });
        expect(readFileSync(join(dir, 'log'), 'utf8').split('\n').filter(Boolean), sh).toEqual([
          'enabled',
          'port-forward',
          'observe-after-relay',
        ]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it('the old form backgrounded the enable too, so observe ran before Relay (the defect this guards)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dplab-relay-'));
    try {
      stub(
        dir,
        'cilium',
        'case "$2" in enable) /bin/sleep 1; echo enabled >> "$LOG";; port-forward) echo port-forward >> "$LOG"; exec sleep 1;; esac',
      );
      stub(dir, 'hubble', 'grep -q enabled "$LOG" && echo observe-after-relay >> "$LOG" || echo observe-too-early >> "$LOG"');
      stub(dir, 'sleep', 'exec /bin/sleep 0.1');
      writeFileSync(join(dir, 'log'), '');
      execFileSync('sh', ['-c', 'cilium hubble enable && cilium hubble port-forward & sleep 5; hubble observe --last 20'], {
        env: { ...process.env, PATH: `${dir}:${process.env.PATH}` },
        timeout: 20_000,
      });
      expect(readFileSync(join(dir, 'log'), 'utf8')).toMatch(/^observe-too-early$/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
