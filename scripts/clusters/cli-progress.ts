/**
 * Progress of `dplab up` in a terminal: a spinner line per running action on a TTY, plain
 * lines otherwise (CI logs, pipes). Fed by the manager's events.
 */
import type { ClusterEvent } from './events.ts';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/** Spinner redraw period; slow enough not to flood a remote terminal. */
const SPINNER_INTERVAL_MS = 100;

const seconds = (ms: number) => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`);

export interface ProgressPrinter {
  onEvent(event: ClusterEvent): void;
  /** Stop the spinner (on exit, whatever happened). */
  dispose(): void;
}

/** `out` is the command's stream (ctx.stderr), never the process's own, so a caller can capture it. */
export function progressPrinter(out: { write(text: string): unknown; isTTY?: boolean }): ProgressPrinter {
  const tty = !!out.isTTY;
  let timer: NodeJS.Timeout | undefined;
  let current: { title: string; startedAt: number } | undefined;
  let frame = 0;

  const clearLine = () => {
    if (tty && current) out.write('\r\x1b[2K');
  };
  const draw = () => {
    if (!current) return;
    out.write(`\r\x1b[2K${FRAMES[frame++ % FRAMES.length]} ${current.title} (${seconds(Date.now() - current.startedAt)})`);
  };
  const stop = () => {
    if (timer) clearInterval(timer);
    timer = undefined;
  };

  return {
    onEvent(e) {
      if (e.type === 'action') {
        if (e.phase === 'start') {
          current = { title: e.title, startedAt: e.at };
          if (tty) {
            draw();
            timer = setInterval(draw, SPINNER_INTERVAL_MS);
            timer.unref();
          } else out.write(`→ ${e.title}\n`);
          return;
        }
        stop();
        clearLine();
        current = undefined;
        const mark = e.phase === 'end' ? '✓' : e.phase === 'skip' ? '-' : '✗';
        out.write(`${mark} ${e.title}${e.elapsedMs !== undefined ? ` (${seconds(e.elapsedMs)})` : ''}\n`);
      } else if (e.type === 'info') {
        clearLine();
        out.write(`  · ${e.message}\n`);
        if (tty && current) draw();
      }
    },
    dispose() {
      stop();
      clearLine();
    },
  };
}
