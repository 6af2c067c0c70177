/**
 * The runner's two sockets: the terminal (`/api/terminal`, a learner's shell or a node shell)
 * and the watch (`/api/terminal/watch`, the read-only mirror), each past the gate, and the open
 * shells counted and waited for on close.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { isMode, type Mode } from '../catalogue/modes.ts';
import type { DplabError } from '../base/errors.ts';
import type { TerminalBroadcast } from '../terminals/broadcast.ts';
import { sizeFromQuery, TERMINAL_LIMITS } from '../terminals/protocol.ts';
import { RUNNER_PATHS } from '../wire/runner-paths.ts';
import { refuseUpgrade } from './core/refuse-upgrade.ts';
import { requestUrl } from './core/router.ts';
import { nodeShellFor } from './node-shell.ts';
import type { RunnerGate } from './runner-gate.ts';
import { TERMINAL_SUBPROTOCOL } from './security.ts';
import { attachTerminal, refuseTerminal } from './terminal-socket.ts';
import { attachWatcher } from './watch-socket.ts';
import { clusterHandle } from '../clusters/providers.ts';

interface RunnerSocketOptions {
  authorize: RunnerGate['authorize'];
  broadcast: TerminalBroadcast;
  /** The notice a lab terminal prints while its cluster is not ready. */
  notice?: (mode: Mode, signal: AbortSignal) => Promise<string | null>;
  /** After a notice: calls `then` once the mode's cluster is ready (terminal-socket.ts); returns the unsubscribe. */
  whenReady?: (mode: Mode, then: () => void) => () => void;
  /** Most shells open at once; one more socket is told so and closed. */
  maxTerminals: number;
}

interface RunnerSockets {
  /** Takes the upgrade when it is ours (returns true), leaves other upgrades (Vite HMR) alone. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Open terminal sessions. */
  readonly open: number;
  /** Closes every socket and resolves once their shells have ended (SIGKILL at the latest). */
  close(): Promise<void>;
}

/** A shell on an accepted socket, counted in `sessions` until it and all it started have ended; one over the limit is told so. */
function startSession(
  ws: WebSocket,
  asked: { url: URL; mode: Mode | null; nodeShell?: readonly string[] },
  sessions: Set<Promise<void>>,
  opts: RunnerSocketOptions,
): void {
  const open = sessions.size;
  if (open >= opts.maxTerminals) {
    refuseTerminal(
      ws,
      `This runner already has ${open} terminal${open === 1 ? '' : 's'} open (the limit is ${opts.maxTerminals}). Close a terminal tab, or start the runner with --max-terminals N.`,
    );
    return;
  }
  const { url, mode, nodeShell } = asked;
  const node = url.searchParams.get('node');
  let ended!: () => void;
  const gone = new Promise<void>((resolve) => (ended = resolve));
  sessions.add(gone);
  attachTerminal(ws, {
    ...sizeFromQuery(url.searchParams),
    mode,
    nodeShell,
    // The cluster's own programs first on the shell's PATH (the sim's kubectl and `docker exec`).
    pathFirst: mode ? clusterHandle(mode).pathFirst : undefined,
    nodeName: nodeShell ? (node ?? undefined) : undefined,
    notice: opts.notice,
    whenReady: opts.whenReady,
    broadcast: opts.broadcast,
    onSessionEnd: () => {
      sessions.delete(gone);
      ended();
    },
  });
}

export function createRunnerSockets(opts: RunnerSocketOptions): RunnerSockets {
  const { authorize, broadcast } = opts;
  // Answer with our protocol only: the client's second subprotocol is the token, never echoed.
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: TERMINAL_LIMITS.maxPayloadBytes,
    handleProtocols: (offered) => (offered.has(TERMINAL_SUBPROTOCOL) ? TERMINAL_SUBPROTOCOL : false),
  });
  /** One per open terminal session, settled when its shell and everything it started have ended. */
  const sessions = new Set<Promise<void>>();

  /** Past the gate, so the page can be told why in words (an HTTP refusal it cannot read). */
  function openTerminal(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL, mode: Mode | null, nodeShell?: readonly string[]) {
    wss.handleUpgrade(req, socket, head, (ws) => startSession(ws, { url, mode, nodeShell }, sessions, opts));
  }

  function terminalUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): void {
    const verdict = authorize(req, { method: 'GET', isUpgrade: true, needsToken: true });
    if (!verdict.ok) return refuseUpgrade(socket, verdict.status, verdict.message);
    const modeParam = url.searchParams.get('mode');
    if (modeParam !== null && modeParam !== '' && !isMode(modeParam))
      return refuseUpgrade(socket, 400, `Unknown mode "${modeParam.slice(0, 40)}".`);
    const mode = modeParam && isMode(modeParam) ? modeParam : null;
    const node = url.searchParams.get('node');
    if (node === null || node === '') return openTerminal(req, socket, head, url, mode);
    // A node shell: the name must be one of the mode's cluster's nodes, never a free-form argv.
    void nodeShellFor(mode, node).then(
      (argv) => openTerminal(req, socket, head, url, mode, argv),
      (err: DplabError) => refuseUpgrade(socket, err.status ?? 400, err.message),
    );
  }

  function watchUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const verdict = authorize(req, { method: 'GET', isUpgrade: true, needsToken: true, viewerAllowed: true });
    if (!verdict.ok) refuseUpgrade(socket, verdict.status, verdict.message);
    else wss.handleUpgrade(req, socket, head, (ws) => attachWatcher(ws, broadcast));
  }

  return {
    upgrade(req, socket, head) {
      const url = requestUrl(req);
      if (!url) return false;
      if (url.pathname === RUNNER_PATHS.watch) watchUpgrade(req, socket, head);
      else if (url.pathname === RUNNER_PATHS.terminal) terminalUpgrade(req, socket, head, url);
      else return false;
      return true;
    },
    get open() {
      return sessions.size;
    },
    async close() {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      // A shell still ending may write (bash saves its history on SIGHUP) into the state folder
      // that whoever closed the runner removes next: closed means none of them is left.
      await Promise.all(sessions);
    },
  };
}
