import { describe, expect, it } from 'vitest';
import { startTerminal } from './session.ts';

describe('a terminal session', () => {
  it('takes resizes while its shell ends, before and after node-pty closes the pty', async () => {
    // node-pty closes the pty when the shell's output ends, before it reports the exit: in
    // that moment its own resize throws EBADF (seen in the e2e journey; here it threw in each
    // of 30 tries without the guard).
    for (let round = 0; round < 5; round++) {
      const started = startTerminal({ cols: 80, rows: 24, mode: null });
      if (!started.ok) throw new Error(started.error);
      const { session } = started;
      let exited = false;
      const gone = new Promise<void>((ok) =>
        session.onExit(() => {
          exited = true;
          ok();
        }),
      );
      session.write('exit\r');
      let resizes = 0;
      while (!exited) {
        session.resize(80 + (resizes % 2), 24);
        resizes++;
        await new Promise((r) => setImmediate(r));
      }
      await gone;
      session.resize(100, 30);
      await session.dispose();
      expect(resizes).toBeGreaterThan(0);
    }
  });
});
