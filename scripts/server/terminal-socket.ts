/**
 * Bridges one WebSocket to one pty shell, speaking the protocol in terminals/protocol.ts.
 * The shell's whole session ends when the socket closes, whichever side closes first.
 */
import type { WebSocket } from 'ws';
import type { Mode } from '../catalogue/modes.ts';
import { parseClientMessage, TERMINAL_LIMITS, type ServerMessage } from '../terminals/protocol.ts';
import { FlowController } from '../terminals/flow.ts';
import { OutputBatcher } from '../terminals/batch.ts';
import { startTerminal, type TerminalTarget } from '../terminals/session.ts';
import type { TerminalBroadcast } from '../terminals/broadcast.ts';
import { readyNotice } from './terminal-notice.ts';

/**
 * How long a lab shell's first output waits for the cluster notice, so the notice comes before
 * the prompt instead of landing in the middle of what the learner is typing.
 */
const NOTICE_WAIT_MS = 4_000;

/** Close codes the client can tell apart. */
const CLOSE = { normal: 1000, launchFailed: 1011, tryAgainLater: 1013 } as const;

/** Too many shells: say so in an error frame, then close with 1013 (Try Again Later); no shell starts. */
export function refuseTerminal(ws: WebSocket, message: string): void {
  send(ws, { type: 'error', message });
  ws.close(CLOSE.tryAgainLater, 'too many terminals');
}

export interface TerminalSocketOptions extends TerminalTarget {
  /** A line to show before the prompt (the lab's cluster is not running, …), if any. */
  notice?: (mode: Mode, signal: AbortSignal) => Promise<string | null>;
  /**
   * After a notice: calls `then` once when the mode's cluster becomes ready (the terminal then
   * says so below the prompt and has the shell draw its prompt again); returns the unsubscribe.
   */
  whenReady?: (mode: Mode, then: () => void) => () => void;
  /** The node a node shell runs on (for the broadcast's list). */
  nodeName?: string;
  onSessionEnd?: () => void;
  /** Output batching (terminals/batch.ts); FLOW's sizes unless a test sets its own. */
  batch?: { maxBytes?: number; windowMs?: number; afterInputMs?: number };
  /** The presenter's broadcast: this shell registers its output and grid there for watchers. */
  broadcast?: TerminalBroadcast;
}

function send(ws: WebSocket, msg: ServerMessage): void {
  if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(msg));
}

export function attachTerminal(ws: WebSocket, opts: TerminalSocketOptions): void {
  const started = startTerminal(opts);
  if (!started.ok) {
    send(ws, { type: 'error', message: started.error });
    ws.close(CLOSE.launchFailed, 'shell launch failed');
    opts.onSessionEnd?.();
    return;
  }
  const { session } = started;
  const flow = new FlowController(session);
  // Small pty reads gathered into large frames while output keeps coming (terminals/batch.ts).
  const batcher = new OutputBatcher(
    (frame) => {
      if (ws.readyState !== ws.OPEN) return;
      ws.send(frame, { binary: true });
      flow.onSent(frame.length);
    },
    opts.batch?.maxBytes,
    opts.batch?.windowMs,
    opts.batch?.afterInputMs,
  );
  /** A control frame after the output gathered before it, so the two never change places. */
  const say = (msg: ServerMessage) => {
    batcher.flush();
    send(ws, msg);
  };
  const source = opts.broadcast?.register({ mode: opts.mode, node: opts.nodeName ?? null, cols: opts.cols, rows: opts.rows });
  let ended = false;
  // The notice's status read (kind, docker) is cancelled with the session, and the session has
  // ended only when that read has too: its commands outlived a closed runner otherwise.
  const noticeRead = new AbortController();
  let noticeDone: Promise<unknown> = Promise.resolve();
  let stopWaitingForReady: (() => void) | undefined;
  const end = () => {
    if (ended) return;
    ended = true;
    batcher.close();
    source?.end();
    noticeRead.abort();
    stopWaitingForReady?.();
    void Promise.allSettled([session.dispose(), noticeDone]).finally(() => opts.onSessionEnd?.());
  };

  send(ws, { type: 'ready', shell: session.shell, cwd: session.cwd, mode: opts.mode, terminal: source?.id, startup: session.startup });
  const forward = (chunk: Buffer) => batcher.push(chunk);
  // Output is held until the notice is known (or NOTICE_WAIT_MS passed), then flushed after it.
  let held: Buffer[] | null = null;
  if (opts.mode && opts.notice && !opts.nodeShell) {
    held = [];
    const release = () => {
      const chunks = held;
      held = null;
      chunks?.forEach(forward);
    };
    const timer = setTimeout(release, NOTICE_WAIT_MS);
    const mode = opts.mode;
    noticeDone = opts
      .notice(mode, noticeRead.signal)
      .then((message) => {
        if (!message) return;
        say({ type: 'notice', message: held ? message : `\r\n${message}` });
        // The notice said kubectl would fail: once the cluster is ready, say that it works now.
        if (opts.whenReady && !ended)
          stopWaitingForReady = opts.whenReady(mode, () => {
            stopWaitingForReady?.();
            if (ended) return;
            say({ type: 'notice', message: `\r\n${readyNotice(mode)}` });
            session.redrawPrompt();
          });
      })
      .catch(() => undefined)
      .finally(() => {
        clearTimeout(timer);
        release();
      });
  }

  session.onData((chunk) => {
    source?.output(chunk);
    if (held) held.push(chunk);
    else forward(chunk);
  });
  session.onExit(({ code, signal }) => {
    // The shell's last words come before the exit frame.
    say({ type: 'exit', code, signal });
    ws.close(CLOSE.normal, 'shell exited');
    end();
  });

  ws.on('message', (data, isBinary) => {
    if (isBinary) {
      say({ type: 'error', message: 'Binary frames are output only; send input as {"type":"input","data":"…"}.' });
      return;
    }
    const parsed = parseClientMessage(data.toString());
    if (!parsed.ok) {
      say({ type: 'error', message: parsed.error });
      return;
    }
    const msg = parsed.value;
    if (msg.type === 'input') {
      // The queue only grows past the limit when the shell stops reading for good (a program
      // that ignores stdin) while input keeps coming: refuse it aloud instead of holding it all.
      if (session.inputQueued + msg.data.length > TERMINAL_LIMITS.maxQueuedInputBytes) {
        say({ type: 'error', message: `Input refused: ${session.inputQueued} bytes are still waiting for the shell to read them.` });
        return;
      }
      // Ctrl-C while a paste is still queued: the learner wants it stopped, not finished first.
      if (msg.data === '\x03' && session.inputQueued > 0) {
        const dropped = session.discardInput();
        say({ type: 'notice', message: `Paste stopped: ${dropped} bytes were not sent.` });
      }
      session.write(msg.data);
      batcher.inputArrived();
    } else if (msg.type === 'resize') {
      session.resize(msg.cols, msg.rows);
      source?.resize(msg.cols, msg.rows);
    } else flow.onAck(msg.bytes);
  });
  ws.on('close', end);
  ws.on('error', end);
}
