/**
 * `docker exec` for a solution that runs as a seat's own user. The seat's user has no Docker
 * (Docker is root on the host), yet about 60 lab commands run `docker exec <node> …`, some inside
 * `$(…)` and loops, so they cannot be taken out of the script. For one solve, the runner (root)
 * serves a Unix socket in a folder only the seat's group may enter (root:<seat gid>, 0710) and puts
 * a `docker` shim first on the solution's PATH (docker-relay-client.mjs, run by the runner's Node).
 * Each call is vetted (docker-exec-request.ts: `docker exec [-i] <node> …` on this seat's own nodes
 * and nothing else) and run through the cluster handle's node exec, the one way the runner reaches
 * a node. Requests and answers are bounded, each call has a timeout, and the folder goes when the
 * solve ends (and, should the runner die first, at the runner's next start: sweepDockerRelays).
 *
 * Protocol, one call per connection: the shim sends one JSON line `{argv, stdin?}`; the runner
 * answers one JSON line `{stdout, stderr, exit}` once the command has ended.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, lstatSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { CommandError, TIMEOUT_FACTOR } from '../base/exec.ts';
import { DplabError } from '../base/errors.ts';
import { projectRoot, stateDir } from '../base/paths.ts';
import type { ClusterHandle } from '../clusters/handle.ts';
import type { ShellUser } from '../terminals/shell-user.ts';
import { vetDockerExec } from './docker-exec-request.ts';

const RELAY_LIMITS = {
  /** A request: the argv and, for `-i`, what was piped in. */
  requestBytes: 1024 * 1024,
  /** An answer: a node's whole rule dump at scale-compare's 1,000 Services fits with room to spare. */
  answerBytes: 32 * 1024 * 1024,
  /** How long a connection may take to send its request. */
  requestMs: 10_000,
  /** One `docker exec` (a rule dump on a node under load), stretched like every other bound. */
  execMs: 2 * 60_000 * TIMEOUT_FACTOR,
  /** Calls at once (a solution's `&` cannot fan out without bound). */
  concurrent: 8,
} as const;

/** Exit code of a call the relay refused or could not run (docker's own for "docker exec itself failed"). */
export const REFUSED_EXIT = 125;

/** Longest Unix socket path Linux takes (sun_path is 108 bytes with its NUL). */
const MAX_SOCKET_PATH = 107;

const CLIENT = join(projectRoot, 'scripts', 'labs', 'docker-relay-client.mjs');

/** Where a seat's relays live: in the seat's own root-owned folder, never the learner's workspace. */
export function relayRoot(): string {
  return join(stateDir(), 'relay');
}

export interface DockerRelay {
  /** The folder to put first on the solution's PATH (it holds the `docker` shim). */
  readonly bin: string;
  readonly socket: string;
  /** Stops serving, ends calls in flight and removes the folder. */
  close(): Promise<void>;
}

interface Answer {
  stdout: string;
  stderr: string;
  exit: number;
}

const refused = (message: string): Answer => ({ stdout: '', stderr: `dplab: ${message}\n`, exit: REFUSED_EXIT });

/** A folder only root and `gid` may enter (not list): made fresh, never a link or a learner's. */
function closedFolder(dir: string, gid: number): void {
  mkdirSync(dir, { mode: 0o700 });
  const st = lstatSync(dir);
  if (!st.isDirectory() || st.uid !== (process.getuid?.() ?? 0)) throw new DplabError(`${dir} is not the runner's own folder.`);
  chownSync(dir, st.uid, gid);
  chmodSync(dir, 0o710);
}

/** Removes relays a runner that ended without closing them left behind. */
export function sweepDockerRelays(): void {
  rmSync(relayRoot(), { recursive: true, force: true });
}

/** Serves `docker exec` on `cluster`'s nodes to `user`'s group for one solve. */
export async function openDockerRelay(cluster: ClusterHandle, user: ShellUser, signal?: AbortSignal): Promise<DockerRelay> {
  const root = relayRoot();
  try {
    closedFolder(root, user.gid);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const st = lstatSync(root);
    if (!st.isDirectory() || st.uid !== (process.getuid?.() ?? 0) || (st.mode & 0o777) !== 0o710 || st.gid !== user.gid)
      throw new DplabError(`${root} is not the runner's own folder for relays.`, { fix: `Remove it: rm -rf ${root}` });
  }
  const dir = join(root, randomBytes(6).toString('hex'));
  closedFolder(dir, user.gid);
  const socket = join(dir, 'sock');
  if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
    rmSync(dir, { recursive: true, force: true });
    throw new DplabError(`The seat's folder is too deep for a Unix socket (${socket}).`, {
      fix: 'Give the portal a shorter state folder (DPLAB_STATE_DIR=/var/lib/dplab).',
    });
  }
  const shim = join(dir, 'docker');
  writeFileSync(shim, `#!/bin/sh\nDPLAB_DOCKER_RELAY=${quote(socket)} exec ${quote(process.execPath)} ${quote(CLIENT)} "$@"\n`, {
    mode: 0o750,
  });
  chownSync(shim, process.getuid?.() ?? 0, user.gid);

  const ended = new AbortController();
  const abort = () => ended.abort();
  signal?.addEventListener('abort', abort, { once: true });
  let nodes: Promise<string[]> | undefined;
  let busy = 0;
  const clients = new Set<Socket>();

  async function answer(line: string): Promise<Answer> {
    let req: { argv?: unknown; stdin?: unknown };
    try {
      req = JSON.parse(line) as typeof req;
    } catch {
      return refused('the request was not JSON.');
    }
    if (!Array.isArray(req.argv) || !req.argv.every((a) => typeof a === 'string')) return refused('the request has no argv.');
    nodes ??= cluster.nodes({ signal: ended.signal });
    let names: string[];
    try {
      names = await nodes;
    } catch (err) {
      nodes = undefined;
      return refused(`could not list this seat's nodes: ${(err as Error).message.slice(0, 300)}`);
    }
    const vetted = vetDockerExec(req.argv as string[], names);
    if (!vetted.ok) return refused(vetted.message);
    const { node, command, stdin } = vetted.request;
    const input = stdin ? (typeof req.stdin === 'string' ? req.stdin : '') : undefined;
    try {
      const r = await cluster.nodeExec(node, command, { input, timeoutMs: RELAY_LIMITS.execMs, signal: ended.signal });
      return { stdout: r.stdout, stderr: r.stderr, exit: r.exitCode };
    } catch (err) {
      if (err instanceof CommandError && err.kind === 'failed' && err.exitCode >= 0)
        return { stdout: err.stdout, stderr: err.stderr, exit: err.exitCode };
      return refused(`docker exec on ${node} failed: ${(err as Error).message.slice(0, 500)}`);
    }
  }

  function reply(sock: Socket, a: Answer): void {
    let text = JSON.stringify(a);
    if (text.length > RELAY_LIMITS.answerBytes)
      text = JSON.stringify(refused(`the answer is larger than ${RELAY_LIMITS.answerBytes} bytes.`));
    sock.end(`${text}\n`);
  }

  function serve(sock: Socket): void {
    clients.add(sock);
    sock.on('close', () => clients.delete(sock));
    sock.on('error', () => sock.destroy());
    sock.setTimeout(RELAY_LIMITS.requestMs, () => sock.destroy());
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      const nl = chunk.indexOf(0x0a);
      size += nl < 0 ? chunk.length : nl;
      if (size > RELAY_LIMITS.requestBytes) {
        sock.off('data', onData);
        reply(sock, refused(`the request is larger than ${RELAY_LIMITS.requestBytes} bytes.`));
        return;
      }
      chunks.push(nl < 0 ? chunk : chunk.subarray(0, nl));
      if (nl < 0) return;
      sock.off('data', onData);
      sock.setTimeout(0);
      if (busy >= RELAY_LIMITS.concurrent) {
        reply(sock, refused(`more than ${RELAY_LIMITS.concurrent} docker calls at once.`));
        return;
      }
      busy++;
      void answer(Buffer.concat(chunks).toString('utf8'))
        .then((a) => reply(sock, a))
        .finally(() => busy--);
    };
    sock.on('data', onData);
  }

  const server: Server = createServer(serve);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, () => resolve());
  });
  // Connecting takes write access to the socket: the seat's group has it, no one else.
  chownSync(socket, process.getuid?.() ?? 0, user.gid);
  chmodSync(socket, 0o660);

  return {
    bin: dir,
    socket,
    async close() {
      signal?.removeEventListener('abort', abort);
      ended.abort();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const c of clients) c.destroy();
      await closed;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function quote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
