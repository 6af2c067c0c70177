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

  private setState(state: State, message: string): void {
    this.dataset.state = state;
    const status = this.querySelector<HTMLElement>('.dplab-terminal-status');
    if (status) status.textContent = message;
  }

  async connectedCallback(): Promise<void> {
    if (this.term) return;
    this.token = captureViewerToken() ?? runnerToken();
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

  /** The largest font at which the presenter's grid fits the element. */
  private fitFont(): void {
    const term = this.term;
    const host = this.querySelector<HTMLElement>('.dplab-terminal-screen') ?? this;
    const screen = host.querySelector<HTMLElement>('.xterm-screen');
    if (!term || !screen) return;
    const { width: W, height: H } = host.getBoundingClientRect();
    const { width: w, height: h } = screen.getBoundingClientRect();
    if (!W || !H || !w || !h) return;
    const size = term.options.fontSize ?? FONT.start;
    const next = Math.max(FONT.min, Math.min(FONT.max, Math.floor(size * Math.min(W / w, H / h) * 4) / 4));
    if (Math.abs(next - size) >= 0.25) {
      term.options.fontSize = next;
      // The cell size is measured at the new font on the next frame; one more pass corrects rounding.
      requestAnimationFrame(() => {
        const again = screen.getBoundingClientRect();
        if (again.width > W + 1 || again.height > H + 1) term.options.fontSize = Math.max(FONT.min, next - 1);
      });
    }
    this.dataset.fontSize = String(term.options.fontSize);
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
