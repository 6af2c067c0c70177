/**
 * The presenter's broadcast: which terminal watchers see, and the fan-out of its output to them.
 *
 * Every shell the runner opens registers here with its grid; its output is kept in a bounded
 * replay buffer (replay.ts) so a watcher who connects late gets the screen first. Watchers see
 * the most recently opened learner shell (not a node shell) unless the presenter pinned one.
 * When the watched terminal changes (a new shell, a pin, the shell ended), every watcher is told
 * with a `mirror` frame and gets the new terminal's replay.
 *
 * A watcher never slows the real terminal: output is handed to each watcher's socket without
 * waiting; a watcher whose socket has more than WATCH_LIMITS.maxBufferedBytes queued skips
 * output until it has drained, then is told how much it missed and gets the screen again.
 * Pure bookkeeping over a small `WatchTarget` interface, so it is tested without sockets.
 */
import type { BroadcastState, ServerMessage } from '../wire/terminal.ts';
import { ReplayBuffer } from './replay.ts';

export const WATCH_LIMITS = {
  /** Watchers at once across all terminals (a class of 30 and a few dashboards). */
  maxWatchers: 64,
  /** Output queued on one watcher's socket beyond which it skips output instead of queueing more. */
  maxBufferedBytes: 512 * 1024,
  /** A skipping watcher is offered the screen again once its queue is below this. */
  resumeBelowBytes: 64 * 1024,
  /** How often a skipping watcher's queue is looked at. */
  drainCheckMs: 200,
} as const;

export const READ_ONLY_NOTICE = "This is a read-only view of the presenter's terminal: what you type here goes nowhere.";

/** One watcher's socket, as the broadcast needs it. */
export interface WatchTarget {
  control(msg: ServerMessage): void;
  output(chunk: Buffer): void;
  /** Bytes handed to the socket and not yet written out. */
  readonly buffered: number;
}

export interface TerminalInfo {
  mode: string | null;
  /** The node of a node shell; null for a learner shell. */
  node: string | null;
  cols: number;
  rows: number;
}

/** What a terminal reports to the broadcast. */
export interface BroadcastSource {
  readonly id: string;
  output(chunk: Buffer): void;
  resize(cols: number, rows: number): void;
  end(): void;
}

interface Entry extends TerminalInfo {
  id: string;
  openedAt: number;
  replay: ReplayBuffer;
}

class Watcher {
  skipped = 0;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    readonly target: WatchTarget,
    private readonly resync: (w: Watcher) => void,
  ) {}

  deliver(chunk: Buffer): void {
    if (this.timer) {
      this.skipped += chunk.length;
      return;
    }
    if (this.target.buffered > WATCH_LIMITS.maxBufferedBytes) {
      this.skipped = chunk.length;
      this.timer = setInterval(() => {
        if (this.target.buffered >= WATCH_LIMITS.resumeBelowBytes) return;
        this.stopWaiting();
        const n = this.skipped;
        this.skipped = 0;
        this.target.control({
          type: 'notice',
          message: `Skipped ${n} bytes of output: this connection was slower than the terminal. Showing the current screen again.`,
        });
        this.resync(this);
      }, WATCH_LIMITS.drainCheckMs);
      this.timer.unref?.();
      return;
    }
    this.target.output(chunk);
  }

  stopWaiting(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

export class TerminalBroadcast {
  private readonly terminals = new Map<string, Entry>();
  private readonly watchers = new Set<Watcher>();
  private pinned: string | null = null;
  private shown: string | null = null;
  private next = 1;

  constructor(private readonly now: () => number = Date.now) {}

  get watcherCount(): number {
    return this.watchers.size;
  }

  /** The terminal watchers see: the pinned one, else the most recently opened learner shell. */
  current(): Entry | null {
    if (this.pinned) return this.terminals.get(this.pinned) ?? null;
    let latest: Entry | null = null;
    for (const t of this.terminals.values()) if (t.node === null) latest = t;
    return latest;
  }

  state(): BroadcastState {
    return {
      terminal: this.current()?.id ?? null,
      pinned: this.pinned !== null,
      watchers: this.watchers.size,
      terminals: [...this.terminals.values()].map(({ id, mode, node, cols, rows, openedAt }) => ({ id, mode, node, cols, rows, openedAt })),
    };
  }

  /** Show this terminal to every watcher (null: follow the most recent learner shell again). False when unknown. */
  pin(id: string | null): boolean {
    if (id !== null && !this.terminals.has(id)) return false;
    this.pinned = id;
    this.changed();
    return true;
  }

  register(info: TerminalInfo): BroadcastSource {
    const id = `t${this.next++}`;
    const entry: Entry = { ...info, id, openedAt: this.now(), replay: new ReplayBuffer() };
    this.terminals.set(id, entry);
    this.changed();
    return {
      id,
      output: (chunk) => {
        if (!this.terminals.has(id)) return;
        entry.replay.push(chunk);
        if (this.shown === id) for (const w of this.watchers) w.deliver(chunk);
      },
      resize: (cols, rows) => {
        if (!this.terminals.has(id) || (entry.cols === cols && entry.rows === rows)) return;
        entry.cols = cols;
        entry.rows = rows;
        if (this.shown === id) for (const w of this.watchers) w.target.control({ type: 'resize', cols, rows });
      },
      end: () => {
        if (!this.terminals.delete(id)) return;
        if (this.pinned === id) this.pinned = null;
        this.changed();
      },
    };
  }

  /** A new watcher gets the current screen first. Null when there are WATCH_LIMITS.maxWatchers already. */
  watch(target: WatchTarget): { close(): void } | null {
    if (this.watchers.size >= WATCH_LIMITS.maxWatchers) return null;
    const w = new Watcher(target, (x) => this.sendScreen(x));
    this.watchers.add(w);
    this.sendScreen(w);
    return {
      close: () => {
        w.stopWaiting();
        this.watchers.delete(w);
      },
    };
  }

  private changed(): void {
    const now = this.current()?.id ?? null;
    if (now === this.shown) return;
    this.shown = now;
    for (const w of this.watchers) {
      w.stopWaiting();
      w.skipped = 0;
      this.sendScreen(w);
    }
  }

  private sendScreen(w: Watcher): void {
    const t = this.current();
    this.shown = t?.id ?? null;
    w.target.control({
      type: 'mirror',
      terminal: t?.id ?? null,
      mode: t?.mode ?? null,
      node: t?.node ?? null,
      cols: t?.cols ?? 80,
      rows: t?.rows ?? 24,
    });
    if (!t) {
      w.target.control({ type: 'notice', message: 'The presenter has no terminal open yet; it appears here when they open one.' });
      return;
    }
    const screen = t.replay.contents();
    if (screen.length) w.target.output(screen);
  }
}
