/**
 * <dplab-terminal-watch>: a read-only mirror of the presenter's terminal, on the runner's
 * /api/terminal/watch socket (scripts/server/watch-socket.ts). The screen keeps the presenter's
 * grid (a `mirror` frame gives it, then the replay of the current screen follows) and the font
 * is scaled so that grid fills the element: large on a projector, smaller in a learner's tab.
 * Nothing typed here is sent: xterm's input is off, and the runner would drop it anyway.
 *
 * Credential: the viewer token of a viewer link (`/watch/#viewer=…`, taken out of the address bar
 * into this tab's sessionStorage), else the page's own runner token.
 */
import { serverMessageSchema, type ServerMessage } from '../../scripts/wire/terminal.ts';
import { openRunnerSocket, runnerToken } from './runner-auth.ts';
import { FONT_FAMILY, LINE_HEIGHT, THEME } from './terminal-look.ts';

export const WATCH_SOCKET_PATH = '/api/terminal/watch';
const VIEWER_KEY = 'dplab.viewer';
const FONT = { min: 8, max: 64, start: 20 } as const;
const RETRY_MS = [1_000, 2_000, 5_000, 10_000] as const;

/** Moves a `#viewer=…` fragment into sessionStorage and out of the address bar; returns the token held. */
export function captureViewerToken(): string | null {
  const m = /(?:^#|&)viewer=([A-Za-z0-9._~-]+)/.exec(location.hash);
  try {
    if (m) {
      sessionStorage.setItem(VIEWER_KEY, m[1]);
      const rest = location.hash
        .slice(1)
        .split('&')
        .filter((p) => !p.startsWith('viewer='))
        .join('&');
      history.replaceState(history.state, '', location.pathname + location.search + (rest ? `#${rest}` : ''));
    }
    return sessionStorage.getItem(VIEWER_KEY);
  } catch {
    return m?.[1] ?? null;
  }
}

type State = 'connecting' | 'watching' | 'waiting' | 'closed';

export class TerminalWatchElement extends HTMLElement {
  private term: import('@xterm/xterm').Terminal | null = null;
  private ws: WebSocket | null = null;
  private resizeObserver: ResizeObserver | null = null;
  private retry = 0;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private token: string | null = null;
  /** Set before the element is connected to watch with this viewer token (a "Follow the instructor" tab). */
  viewerToken: string | null = null;

  private setState(state: State, message: string): void {
    this.dataset.state = state;
    const status = this.querySelector<HTMLElement>('.dplab-terminal-status');
    if (status) status.textContent = message;
  }

  async connectedCallback(): Promise<void> {
    if (this.term) return;
    this.token = this.viewerToken ?? captureViewerToken() ?? runnerToken();
    this.setState('connecting', "Connecting to the presenter's terminal…");
    const { Terminal } = await import('@xterm/xterm');
    const host = this.querySelector<HTMLElement>('.dplab-terminal-screen') ?? this;
    this.term = new Terminal({
      fontSize: FONT.start,
      theme: THEME,
      lineHeight: LINE_HEIGHT,
      fontFamily: FONT_FAMILY,
      scrollback: 1000,
      disableStdin: true,
      cursorBlink: false,
    });
    this.term.open(host);
    this.resizeObserver = new ResizeObserver(() => this.fitFont());
    this.resizeObserver.observe(host);
    this.connect();
  }

  disconnectedCallback(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const ws = this.ws;
    this.ws = null;
    ws?.close();
    this.resizeObserver?.disconnect();
    this.term?.dispose();
    this.term = null;
  }

  /**
   * The largest font at which the presenter's grid fits the element. The cell's width and height
   * per pixel of font are measured once on a probe in the terminal's font (not on xterm's screen,
   * whose size lags a font change and would feed back into the next measurement).
   */
  private fitFont(): void {
    const term = this.term;
    const host = this.querySelector<HTMLElement>('.dplab-terminal-screen') ?? this;
    if (!term) return;
    const { width: W, height: H } = host.getBoundingClientRect();
    if (!W || !H) return;
    const cell = this.cellPerPx();
    const byWidth = W / (term.cols * cell.width);
    const byHeight = H / (term.rows * cell.height * LINE_HEIGHT);
    // A little slack for xterm's rounding of cells to whole device pixels.
    const next = Math.max(FONT.min, Math.min(FONT.max, Math.floor(Math.min(byWidth, byHeight) * 0.95 * 4) / 4));
    if (next !== term.options.fontSize) term.options.fontSize = next;
    this.dataset.fontSize = String(next);
  }

  private cell: { width: number; height: number } | null = null;

  private cellPerPx(): { width: number; height: number } {
    if (this.cell) return this.cell;
    const probe = document.createElement('span');
    probe.textContent = 'W'.repeat(50);
    Object.assign(probe.style, {
      position: 'absolute',
      visibility: 'hidden',
      whiteSpace: 'pre',
      fontFamily: FONT_FAMILY,
      fontSize: '100px',
      lineHeight: 'normal',
    });
    document.body.append(probe);
    const box = probe.getBoundingClientRect();
    probe.remove();
    this.cell = { width: box.width / 50 / 100 || 0.6, height: box.height / 100 || 1.2 };
    return this.cell;
  }

  private connect(): void {
    const term = this.term;
    if (!term) return;
    const ws = openRunnerSocket(this.getAttribute('src') || WATCH_SOCKET_PATH, this.token);
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    ws.onopen = () => {
      this.retry = 0;
    };
    ws.onmessage = (ev) => {
      if (ev.data instanceof ArrayBuffer) {
        term.write(new Uint8Array(ev.data));
        return;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(String(ev.data));
      } catch {
        return;
      }
      const msg = serverMessageSchema.safeParse(parsed);
      if (msg.success) this.control(msg.data);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      const wait = RETRY_MS[Math.min(this.retry++, RETRY_MS.length - 1)];
      this.setState(
        'closed',
        `Not connected to the presenter's runner (it may have stopped, or this link is from an earlier run). Trying again in ${wait / 1000} s…`,
      );
      this.retryTimer = setTimeout(() => this.connect(), wait);
    };
  }

  private control(msg: ServerMessage): void {
    const term = this.term;
    if (!term) return;
    if (msg.type === 'mirror') {
      term.reset();
      term.resize(msg.cols, msg.rows);
      this.dataset.terminal = msg.terminal ?? '';
      this.dataset.cols = String(msg.cols);
      this.dataset.rows = String(msg.rows);
      if (msg.terminal)
        this.setState('watching', `Watching the presenter's terminal${msg.mode ? ` (${msg.mode} cluster)` : ''}, read-only.`);
      else this.setState('waiting', 'The presenter has no terminal open yet; it appears here when they open one.');
      this.fitFont();
    } else if (msg.type === 'resize') {
      term.resize(msg.cols, msg.rows);
      this.dataset.cols = String(msg.cols);
      this.dataset.rows = String(msg.rows);
      this.fitFont();
    } else if (msg.type === 'notice') {
      const status = this.querySelector<HTMLElement>('.dplab-watch-notice');
      if (status) status.textContent = msg.message;
    } else if (msg.type === 'error') {
      this.setState('closed', msg.message);
    }
  }
}

if (!customElements.get('dplab-terminal-watch')) customElements.define('dplab-terminal-watch', TerminalWatchElement);
