/**
 * Progress of `dplab up` in a terminal: a spinner line for the running action on a TTY (the one
 * started last, with a count of any still running beside it), plain lines otherwise (CI logs,
 * pipes). Fed by the manager's events.
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
  /** The actions running now, in the order they started. */
  const running: { id: string; title: string; startedAt: number }[] = [];
  let frame = 0;

  const clearLine = () => {
    if (tty && running.length) out.write('\r\x1b[2K');
  };
  const draw = () => {
    const current = running.at(-1);
    if (!current) return;
    const more = running.length > 1 ? ` + ${running.length - 1} more running` : '';
    out.write(`\r\x1b[2K${FRAMES[frame++ % FRAMES.length]} ${current.title} (${seconds(Date.now() - current.startedAt)})${more}`);
  };
  const stop = () => {
    if (timer) clearInterval(timer);
    timer = undefined;
  };

  return {
    onEvent(e) {
      if (e.type === 'action') {
        if (e.phase === 'start') {
          running.push({ id: e.id, title: e.title, startedAt: e.at });
          if (tty) {
            draw();
            timer ??= setInterval(draw, SPINNER_INTERVAL_MS);
            timer.unref();
          } else out.write(`→ ${e.title}\n`);
          return;
        }
        clearLine();
        const at = running.findIndex((r) => r.id === e.id);
        if (at >= 0) running.splice(at, 1);
        if (!running.length) stop();
        const mark = e.phase === 'end' ? '✓' : '✗';
        out.write(`${mark} ${e.title}${e.elapsedMs !== undefined ? ` (${seconds(e.elapsedMs)})` : ''}\n`);
        if (tty) draw();
      } else if (e.type === 'info') {
        clearLine();
        out.write(`  · ${e.message}\n`);
        if (tty) draw();
      }
    },
    dispose() {
      stop();
      clearLine();
    },
  };
}
