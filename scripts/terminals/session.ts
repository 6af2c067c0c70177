/**
 * One learner shell on a pty. Launch errors are returned, not thrown, so the socket can say
 * what went wrong; dispose() ends the shell's whole session and can be called twice.
 */
import * as pty from '@lydell/node-pty';
import type { Mode } from '../catalogue/modes.ts';
import { nodeShellLaunch, shellLaunch, type ShellLaunch, type ShellStartup } from './environment.ts';
import { endSession } from './process-tree.ts';
import { PtyInput } from './pty-input.ts';

/** How long the window stays a row taller while the shell redraws its prompt (redrawPrompt). */
const REDRAW_APART_MS = 150;

export interface TerminalSession {
  readonly pid: number;
  readonly shell: string;
  readonly cwd: string;
  /** The rc file it reads first and whether it marks its first prompt (environment.ts). */
  readonly startup?: ShellStartup;
  onData(listener: (chunk: Buffer) => void): void;
  onExit(listener: (e: { code: number; signal: number | null }) => void): void;
  /** Queues input for the pty; never blocks (see pty-input.ts). */
  write(data: string): void;
  /** Input bytes accepted but not yet taken by the pty. */
  readonly inputQueued: number;
  /** Drops input not yet taken by the pty; returns the bytes dropped. */
  discardInput(): number;
  resize(cols: number, rows: number): void;
  /**
   * Has an interactive shell draw its prompt and what the learner has typed again, on the line
   * the cursor is on, after a line the runner wrote below the prompt: the window grows by a row
   * and shrinks back, and readline redraws its line on each change of size (readline 8 redraws
   * only when the size changed, so a bare SIGWINCH does nothing). A running command sees the same
   * two changes of size, as when the page is resized.
   */
  redrawPrompt(): void;
  pause(): void;
  resume(): void;
  /** Ends the session's processes; resolves once they have been signalled to the end. */
  dispose(): Promise<void>;
}

export interface TerminalTarget {
  cols: number;
  rows: number;
  mode: Mode | null;
  /** A shell inside a node: the argv from the cluster handle (`docker exec -it <node> bash` under kind). */
  nodeShell?: readonly string[];
  /** The mode's cluster handle's `pathFirst` (the sim's kubectl and `docker exec` shim), first on the shell's PATH. */
  pathFirst?: readonly string[];
}

export function startTerminal(opts: TerminalTarget): { ok: true; session: TerminalSession } | { ok: false; error: string } {
  let launch: ShellLaunch;
  try {
    launch =
      opts.nodeShell && opts.mode ? nodeShellLaunch(opts.mode, opts.nodeShell, opts.pathFirst) : shellLaunch(opts.mode, opts.pathFirst);
  } catch (err) {
    return { ok: false, error: `Could not prepare the shell: ${err instanceof Error ? err.message : String(err)}` };
  }
  let proc: pty.IPty;
  try {
    proc = pty.spawn(launch.file, launch.args, {
      name: 'xterm-256color',
      cols: opts.cols,
      rows: opts.rows,
      cwd: launch.cwd,
      env: launch.env,
      // Bytes, not strings: output is forwarded as binary frames without re-encoding.
      encoding: null,
    });
  } catch (err) {
    return { ok: false, error: `Could not start ${launch.file}: ${err instanceof Error ? err.message : String(err)}` };
  }
  let exited = false;
  let disposed: Promise<void> | null = null;
  // The master fd (Unix); node-pty's own write is the fallback where there is none.
  const fd = (proc as unknown as { fd?: unknown }).fd;
  const input = typeof fd === 'number' ? new PtyInput(fd) : null;
  proc.onExit(() => {
    exited = true;
    input?.close();
  });
  let size = { cols: opts.cols, rows: opts.rows };
  const resize = (cols: number, rows: number) => {
    if (exited) return;
    try {
      proc.resize(cols, rows);
    } catch {
      // EBADF: the shell ended and node-pty closed the pty before its exit event came. A
      // resize from the page in that moment threw out of the socket's message handler and
      // took the runner down; there is nothing left to resize.
    }
  };
  const session: TerminalSession = {
    pid: proc.pid,
    shell: launch.shell ?? launch.file,
    cwd: launch.cwd,
    startup: launch.startup,
    onData: (listener) => {
      proc.onData((d) => listener(typeof d === 'string' ? Buffer.from(d) : (d as unknown as Buffer)));
    },
    onExit: (listener) => {
      proc.onExit(({ exitCode, signal }) => listener({ code: exitCode, signal: signal ?? null }));
    },
    write: (data) => {
      if (exited) return;
      if (input) input.write(data);
      else proc.write(data);
    },
    get inputQueued() {
      return input?.queued ?? 0;
    },
    discardInput: () => input?.discard() ?? 0,
    resize: (cols, rows) => {
      size = { cols, rows };
      resize(cols, rows);
    },
    redrawPrompt: () => {
      resize(size.cols, size.rows + 1);
      // Apart, so the shell reads the taller size before it is back (two reads of one size redraw nothing).
      setTimeout(() => resize(size.cols, size.rows), REDRAW_APART_MS);
    },
    pause: () => proc.pause(),
    resume: () => proc.resume(),
    dispose: () => {
      input?.close();
      disposed ??= endSession(proc.pid);
      return disposed;
    },
  };
  return { ok: true, session };
}
