/**
 * `kubectl port-forward`, started again whenever it exits, for a browser that must keep one
 * origin for a whole test file. Measured here: with a seat's nested kind cluster coming up on
 * two cores (load 29) the forward to the portal exited mid-test, and every later page load was
 * refused; a learner's page reconnects by itself (its event streams retry for ~30 s) once the
 * same port answers again.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface KeptForward {
  /** Why each earlier forward ended (its last stderr line and exit code), for a failure's report. */
  readonly exits: readonly string[];
  stop(): void;
}

/** Resolves once the first forward listens; later exits start a new one after a second. */
export async function keepForwarding(args: readonly string[], say: (line: string) => void): Promise<KeptForward> {
  const exits: string[] = [];
  let child: ChildProcess | undefined;
  let stopped = false;

  function start(): Promise<void> {
    const c = spawn('kubectl', [...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = c;
    let lastError = '';
    c.stderr!.on('data', (d: Buffer) => {
      const line = d.toString().trim().split('\n').pop();
      if (line) lastError = line;
    });
    const listening = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`kubectl port-forward did not start in 60 s: ${lastError}`)), 60_000);
      c.stdout!.on('data', (d: Buffer) => {
        if (d.toString().includes('Forwarding from')) {
          clearTimeout(timer);
          resolve();
        }
      });
      c.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`kubectl port-forward exited (${code}): ${lastError}`));
      });
    });
    c.once('exit', (code) => {
      if (stopped) return;
      const why = `exited (${code}): ${lastError || 'no message'}`;
      exits.push(why);
      say(`kubectl port-forward ${why}; starting it again`);
      setTimeout(() => {
        if (!stopped) start().catch((err: Error) => say(err.message));
      }, 1_000);
    });
    return listening;
  }

  await start().catch((err: unknown) => {
    stopped = true;
    child?.kill();
    throw err;
  });
  return {
    exits,
    stop() {
      stopped = true;
      child?.kill();
    },
  };
}
