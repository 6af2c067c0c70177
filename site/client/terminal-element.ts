/**
 * <dplab-terminal follow-page-mode>: an xterm.js terminal on the runner's /api/terminal socket.
 * With `follow-page-mode` it uses the page's one mode (page-mode.ts) and reconnects when it
 * changes; `mode="iptables"` pins one; `node="dplab-iptables-worker"` opens a shell on that node
 * of the mode's cluster instead of on this machine.
 * xterm is imported when the element connects, so only pages with a terminal download it.
 * Protocol: scripts/terminals/protocol.ts (binary frames = output, JSON text frames = control).
 */
import {
  ACK_EVERY_BYTES,
  serverMessageSchema,
  SHELL_PROMPT_OSC,
  SHELL_READY_OSC,
  splitInput,
  type ClientMessage,
  type ServerMessage,
} from '../../scripts/wire/terminal.ts';
import { RunnerUnavailable, runnerState } from './runner-api.ts';
import { openRunnerSocket } from './runner-auth.ts';
import { fontSize, onFontSizeChange } from './font-size.ts';
import { onPageModeChange, pageMode } from './page-mode.ts';
import { FONT_FAMILY, LINE_HEIGHT, THEME } from './terminal-look.ts';
import { wrapWords } from './word-wrap.ts';
import { RUN_QUEUE_MAX, RunQueue, type RunState } from './run-queue.ts';

/** Past this without a prompt, "Starting your shell…" says why it may be slow and how to skip it. */
const SLOW_SHELL_MS = 4_000;

/** SGR colours of what the page itself writes into the terminal. */
const SAY = { notice: 33, error: 31, dim: 2, info: 36 } as const;
/** A dropped terminal tries again after 1 s, doubling up to every 30 s (a runner, a seat or a laptop coming back). */
const RECONNECT_FIRST_MS = 1_000;
const RECONNECT_MAX_MS = 30_000;

type State = 'idle' | 'connecting' | 'open' | 'exited' | 'closed' | 'unavailable';

let active: TerminalElement | null = null;

export class TerminalElement extends HTMLElement {
  private term: import('@xterm/xterm').Terminal | null = null;
  private fit: import('@xterm/addon-fit').FitAddon | null = null;
  private ws: WebSocket | null = null;
  private rendered = 0;
  private lastAck = 0;
  private resizeObserver: ResizeObserver | null = null;
  private disposeFont: (() => void) | null = null;
  private disposeMode: (() => void) | null = null;
  private host: HTMLElement = this;
  /** Until the shell's first prompt (SHELL_READY_OSC, or its first output from a runner that sends none). */
  private starting: { marker: boolean; timer?: number } | null = null;
  /**
   * Writes waiting for the terminal to have a size of its own. In a tab in the background
   * (display: none) it has none and keeps its first guess at the width; the page's own text is
   * wrapped for the width the learner will see, so from the first such text on everything waits,
   * in order, until the terminal is laid out (`say`, `flushHeld`).
   */
  private held: (() => void)[] | null = null;
  /** After a dropped connection (a restarted runner or portal): the next attempt, and how many came before. */
  private retry: { attempt: number; timer?: ReturnType<typeof setTimeout> } | null = null;
  /** Enter starts a new connection while one is offered. */
  private restartKey: { dispose(): void } | null = null;
  /** Click-to-run commands waiting for the prompt of the one before (run-queue.ts). */
  private readonly runs = new RunQueue(
    (data) => splitInput(data).forEach((piece) => this.send({ type: 'input', data: piece })),
    (waiting) => this.showQueue(waiting),
  );

  static get observedAttributes(): string[] {
    return ['mode'];
  }

  get mode(): string | null {
    if (this.hasAttribute('follow-page-mode')) return pageMode() || null;
    return this.getAttribute('mode') || null;
  }

  /** A shell on this node of the mode's cluster, or null for the learner's shell on this machine. */
  get node(): string | null {
    return this.getAttribute('node') || null;
  }

  private setState(state: State, message?: string): void {
    this.dataset.state = state;
    const status = this.querySelector<HTMLElement>('.dplab-terminal-status');
    if (!status) return;
    delete status.dataset.queue;
    status.textContent = message ?? '';
  }

  async connectedCallback(): Promise<void> {
    if (this.term) return;
    this.setState('connecting', 'Starting the terminal…');
    const [{ Terminal }, { FitAddon }] = await Promise.all([import('@xterm/xterm'), import('@xterm/addon-fit')]);
    const host = this.querySelector<HTMLElement>('.dplab-terminal-screen') ?? this;
    this.host = host;
    this.term = new Terminal({
      fontSize: fontSize(),
      theme: THEME,
      // A blinking cursor costs the DOM renderer a painted frame per keystroke: with it on, the
      // echo reached the screen a blink cycle late (27 ms at p50 against 2.6 ms with it off,
      // issue 15; `dplab bench terminal` measures it). A steady block is what wetty shows too.
      cursorBlink: false,
      lineHeight: LINE_HEIGHT,
      scrollback: 5000,
      convertEol: false,
      fontFamily: FONT_FAMILY,
    });
    this.fit = new FitAddon();
    this.term.loadAddon(this.fit);
    this.term.open(host);
    // The lab shell's rc file ends with this sequence: its prompt is next (scripts/terminals/environment.ts).
    this.term.parser.registerOscHandler(SHELL_READY_OSC, () => {
      this.shellStarted();
      return true;
    });
    // Each prompt of a lab shell carries this mark: the command before it is done.
    this.term.parser.registerOscHandler(SHELL_PROMPT_OSC, () => {
      this.runs.prompt();
      return true;
    });
    // Esc empties the queue of waiting commands (and is not sent) while there is one.
    this.term.attachCustomKeyEventHandler((e) => {
      if (e.key !== 'Escape' || this.runs.waiting === 0) return true;
      if (e.type === 'keydown') this.runs.clear();
      return false;
    });
    this.fitNow();
    // A paste can be megabytes: send it as message-sized pieces; the runner queues them in order.
    this.term.onData((data) => {
      this.runs.typed(data);
      splitInput(data).forEach((piece) => this.send({ type: 'input', data: piece }));
    });
    this.term.onResize(({ cols, rows }) => {
      this.showSize();
      this.send({ type: 'resize', cols, rows });
    });
    this.showSize();
    this.term.textarea?.addEventListener('focus', () => (active = this));
    this.resizeObserver = new ResizeObserver(() => {
      this.fitNow();
      this.flushHeld();
    });
    this.resizeObserver.observe(host);
    this.disposeFont = onFontSizeChange((px) => {
      if (this.term) this.term.options.fontSize = px;
      this.fitNow();
    });
    if (this.hasAttribute('follow-page-mode')) {
      this.disposeMode = onPageModeChange(({ mode }) => this.switchMode(mode));
    }
    if (!this.node) active ??= this;
    this.connect();
  }

  disconnectedCallback(): void {
    this.stopRetrying();
    this.ws?.close();
    this.resizeObserver?.disconnect();
    this.disposeFont?.();
    this.disposeMode?.();
    this.term?.dispose();
    this.term = null;
    if (active === this) active = null;
  }

  attributeChangedCallback(name: string, oldValue: string | null, newValue: string | null): void {
    // A new mode means a shell with another KUBECONFIG: start over.
    if (name === 'mode' && oldValue !== newValue && this.term && !this.hasAttribute('follow-page-mode')) this.switchMode(newValue ?? '');
  }

  /** A shell with another KUBECONFIG: say so, then start over on the new cluster. */
  private switchMode(mode: string): void {
    const term = this.term;
    if (!term) return;
    const ws = this.ws;
    this.ws = null;
    ws?.close();
    this.held = null;
    term.reset();
    const what = mode ? `the ${mode} cluster (dplab-${mode})` : 'no cluster';
    this.setState('connecting', `Switched to ${what}: starting a new shell…`);
    this.say(`[switched to ${what}; a new shell starts]`, SAY.info);
    this.connect();
  }

  /**
   * Type text into the shell as if the learner had (used by click-to-run snippets): at once when
   * the shell is at its prompt, otherwise once the command before has brought it back.
   */
  type(text: string, execute: boolean, onState?: (state: RunState) => void): RunState {
    const state = this.runs.submit({ text, execute, onState });
    this.term?.focus();
    return state;
  }

  /** Commands waiting for the prompt, shown on the status line and as `data-queued`. */
  private showQueue(waiting: number): void {
    const status = this.querySelector<HTMLElement>('.dplab-terminal-status');
    const ours = status?.dataset.queue === 'true';
    if (waiting > 0) {
      this.dataset.queued = String(waiting);
      if (status && (ours || !status.textContent)) {
        status.dataset.queue = 'true';
        status.textContent = `${waiting === 1 ? '1 command waits' : `${waiting} commands wait`} for the prompt (at most ${RUN_QUEUE_MAX}); each runs when the one before it is done. Esc in the terminal drops them.`;
      }
      return;
    }
    delete this.dataset.queued;
    if (status && ours) {
      delete status.dataset.queue;
      status.textContent = '';
    }
  }

  /**
   * The terminal's buffer (scrollback and screen) as lines as wide as the grid, each marked when
   * it continues the line before it (xterm wrapped that at the last column): what a learner
   * reads, readable from outside (tests).
   */
  bufferLines(): { text: string; wrapped: boolean }[] {
    const buffer = this.term?.buffer.active;
    if (!buffer) return [];
    const out: { text: string; wrapped: boolean }[] = [];
    for (let i = 0; i < buffer.length; i++) {
      const line = buffer.getLine(i);
      if (line) out.push({ text: line.translateToString(false), wrapped: line.isWrapped });
    }
    return out;
  }

  /** The grid size, readable from outside (tests, the status line). */
  private showSize(): void {
    if (!this.term) return;
    this.dataset.cols = String(this.term.cols);
    this.dataset.rows = String(this.term.rows);
  }

  private fitNow(): void {
    try {
      this.fit?.fit();
    } catch {
      // not laid out yet
    }
  }

  private send(msg: ClientMessage): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
  }

  private connect(): void {
    const term = this.term;
    if (!term) return;
    this.rendered = 0;
    this.lastAck = 0;
    this.runs.reset();
    const q = new URLSearchParams({ cols: String(term.cols), rows: String(term.rows) });
    if (this.mode) q.set('mode', this.mode);
    if (this.node) q.set('node', this.node);
    this.dataset.connectedMode = this.mode ?? '';
    const ws = openRunnerSocket(`/api/terminal?${q}`);
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    let opened = false;
    let lastError = '';
    ws.onopen = () => {
      opened = true;
      this.stopRetrying();
      // A slow ~/.bashrc (pyenv, nvm) can keep the prompt away for a while: say what is going on.
      this.setState('open', 'Starting your shell…');
      this.shellStarting();
      this.fitNow();
      this.send({ type: 'resize', cols: term.cols, rows: term.rows });
    };
    ws.onmessage = (ev) => {
      if (ev.data instanceof ArrayBuffer) {
        if (this.starting && !this.starting.marker) this.shellStarted();
        const bytes = new Uint8Array(ev.data);
        this.output(() =>
          term.write(bytes, () => {
            this.rendered += bytes.length;
            if (this.rendered - this.lastAck >= ACK_EVERY_BYTES) {
              this.lastAck = this.rendered;
              this.send({ type: 'ack', bytes: this.rendered });
            }
          }),
        );
        return;
      }
      const msg = serverMessageSchema.safeParse(JSON.parse(String(ev.data)));
      // A control frame of another shape (a newer runner) is skipped; the byte stream goes on.
      if (!msg.success) return;
      if (msg.data.type === 'error') lastError = String(msg.data.message);
      this.control(msg.data);
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.shellStarted(false);
      if (this.dataset.state === 'exited') return;
      // 1013 Try Again Later: the runner's terminal limit; its error frame said why.
      if (ev.code === 1013) {
        this.setState('unavailable', lastError || 'The runner has too many terminals open. Close one and try again.');
        this.say('[press Enter to try again]', SAY.dim);
        this.offerRestart();
        return;
      }
      if (!opened) {
        // Coming back after a drop: keep trying while the runner is away (a portal restarting its
        // seats takes seconds); a runner that answers and still refuses is explained.
        if (this.retry) void this.retryOrExplain();
        else void this.explainRefusal();
        return;
      }
      // The connection dropped under an open shell: the runner or the portal restarted, or the
      // laptop slept. Come back by itself; Enter does it at once.
      this.retry = { attempt: 0 };
      this.setState('closed', 'Disconnected from the runner: reconnecting…');
      this.say('\n[disconnected from the runner; reconnecting by itself, or press Enter]', SAY.notice);
      this.scheduleRetry();
      this.offerRestart();
    };
  }

  private control(msg: ServerMessage): void {
    const term = this.term;
    if (!term) return;
    if (msg.type === 'ready') this.shellStarting(msg.startup);
    else if (msg.type === 'notice') this.say(msg.message, SAY.notice);
    else if (msg.type === 'error') this.say(`\n[${msg.message}]`, SAY.error);
    else if (msg.type === 'exit') {
      this.shellStarted(false);
      this.setState('exited', `The shell exited (code ${msg.code}).`);
      this.say(`\n[shell exited with code ${msg.code}; press Enter for a new one]`, SAY.dim);
      this.offerRestart();
    }
  }

  /**
   * The socket is open (no `startup` yet) or the shell's `ready` frame came: until its prompt,
   * the status line says it is starting, and after SLOW_SHELL_MS which rc file it is reading
   * and how to start lab shells without it. A runner that marks no prompt: the first output counts.
   */
  private shellStarting(startup?: { rc: string | null; marker: boolean }): void {
    if (this.starting?.timer) clearTimeout(this.starting.timer);
    const marker = startup?.marker ?? false;
    const slow = startup?.rc
      ? `Starting your shell… it is still reading your ${startup.rc}. To start lab shells without it, stop the runner and start it again with DPLAB_SHELL_NORC=1 npm start.`
      : 'Starting your shell… it has not shown its prompt yet.';
    const timer = window.setTimeout(() => {
      if (this.starting?.timer === timer && this.dataset.state === 'open') this.setState('open', slow);
    }, SLOW_SHELL_MS);
    this.starting = { marker, timer };
  }

  /** The prompt is here (or the socket closed: `clear` false leaves the status to what follows). */
  private shellStarted(clear = true): void {
    if (!this.starting) return;
    clearTimeout(this.starting.timer);
    this.starting = null;
    if (clear) this.setState('open');
  }

  /**
   * A line of the page's own (not the shell's) in one colour, broken at word boundaries for the
   * terminal's width now. A leading line break in `text` starts it on a fresh line.
   */
  private say(text: string, sgr: number): void {
    const term = this.term;
    if (!term) return;
    if (!this.laidOut()) this.held ??= [];
    this.output(() => term.write(`\x1b[${sgr}m${wrapWords(text, term.cols)}\x1b[0m\r\n`));
  }

  /** Writes now, or after what is held, in order. */
  private output(write: () => void): void {
    if (this.held) this.held.push(write);
    else write();
  }

  private laidOut(): boolean {
    return this.host.clientWidth > 0 && this.host.clientHeight > 0;
  }

  /** Laid out (its tab came to the front) and fitted: what waited is written at the width now. */
  private flushHeld(): void {
    if (!this.held || !this.laidOut()) return;
    const held = this.held;
    this.held = null;
    held.forEach((write) => write());
  }

  private offerRestart(): void {
    const term = this.term;
    if (!term) return;
    this.restartKey?.dispose();
    const sub = term.onKey(({ domEvent }) => {
      if (domEvent.key !== 'Enter') return;
      this.reconnect();
    });
    this.restartKey = sub;
  }

  /** A new connection now (Enter, or the next automatic attempt). */
  private reconnect(): void {
    const term = this.term;
    if (!term) return;
    this.restartKey?.dispose();
    this.restartKey = null;
    if (this.retry?.timer) clearTimeout(this.retry.timer);
    this.held = null;
    term.reset();
    this.connect();
  }

  /** 1, 2, 4, 8, 16 s, then every 30 s, until a connection opens. */
  private scheduleRetry(): void {
    const retry = this.retry;
    if (!retry) return;
    const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_FIRST_MS * 2 ** retry.attempt);
    retry.attempt += 1;
    retry.timer = setTimeout(() => this.reconnect(), delay);
  }

  private stopRetrying(): void {
    if (this.retry?.timer) clearTimeout(this.retry.timer);
    this.retry = null;
  }

  private async retryOrExplain(): Promise<void> {
    const state = await runnerState();
    if (state === 'ok') {
      // The runner is there and refused this page: retrying will not help.
      this.stopRetrying();
      void this.explainRefusal();
      return;
    }
    this.setState('closed', 'Disconnected from the runner: reconnecting…');
    this.scheduleRetry();
    this.offerRestart();
  }

  private async explainRefusal(): Promise<void> {
    const state = await runnerState();
    const message = state === 'ok' ? 'The runner refused the terminal. Reload the page.' : new RunnerUnavailable(state).message;
    this.setState('unavailable', message);
    this.say(message, SAY.notice);
    this.say('[press Enter to try again]', SAY.dim);
    this.offerRestart();
  }
}

/** Snippets go to the learner's shell (never a node shell); its tab comes to the front. */
document.addEventListener('dplab:type', (ev) => {
  const detail = (ev as CustomEvent<{ text: string; execute?: boolean; onState?: (state: RunState) => void }>).detail;
  const target = active ?? document.querySelector<TerminalElement>('dplab-terminal:not([node])');
  if (!target || !detail || typeof detail.text !== 'string') return;
  target.dispatchEvent(new CustomEvent('dplab:reveal', { bubbles: true }));
  target.type(detail.text, detail.execute !== false, detail.onState);
});

if (!customElements.get('dplab-terminal')) customElements.define('dplab-terminal', TerminalElement);
