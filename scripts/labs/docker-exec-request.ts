/**
 * What a seat's solution may ask the runner to run for it (scripts/labs/docker-relay.ts): only
 * `docker exec [-i] <node> <command…>` on a node of the seat's own cluster. The seat's user has no
 * Docker (Docker is root on the host), so everything else a `docker` call could do (`run`,
 * `--privileged`, `-u`, `-e`, `--workdir`, another seat's node) is refused here, by name.
 */

/** A `docker` call the runner will run: the node, the command inside it, and whether stdin goes with it. */
interface DockerExecRequest {
  node: string;
  command: string[];
  stdin: boolean;
}

export type Vetted = { ok: true; request: DockerExecRequest } | { ok: false; message: string };

/** The only options a solution's `docker exec` may carry: stdin, nothing that changes who or where it runs. */
const STDIN_FLAGS = new Set(['-i', '--interactive']);

const ONLY =
  "In a workshop seat, a solution's `docker` is the runner's: it runs only `docker exec [-i] <node> <command…>` on this seat's own nodes";

/** True when the argv asks for stdin (the relay's client reads it only then). */
export function wantsStdin(argv: readonly string[]): boolean {
  if (argv[0] !== 'exec') return false;
  for (const a of argv.slice(1)) {
    if (!a.startsWith('-')) return false;
    if (STDIN_FLAGS.has(a)) return true;
  }
  return false;
}

/** `argv` (what followed `docker`) checked against this seat's node names. */
export function vetDockerExec(argv: readonly string[], nodes: readonly string[]): Vetted {
  const [sub, ...rest] = argv;
  if (sub !== 'exec') return { ok: false, message: `${ONLY}; \`docker ${String(sub ?? '').slice(0, 40)}\` is not available.` };
  let stdin = false;
  let i = 0;
  for (; i < rest.length && rest[i]!.startsWith('-'); i++) {
    if (!STDIN_FLAGS.has(rest[i]!)) return { ok: false, message: `${ONLY}; the option ${rest[i]!.slice(0, 40)} is not allowed.` };
    stdin = true;
  }
  const node = rest[i];
  if (node === undefined) return { ok: false, message: `${ONLY}; this call names no node.` };
  if (!nodes.includes(node)) return { ok: false, message: `${ONLY}; ${node.slice(0, 80)} is not one of them (${nodes.join(', ')}).` };
  const command = rest.slice(i + 1);
  if (command.length === 0) return { ok: false, message: `${ONLY}; this call names no command to run in ${node}.` };
  return { ok: true, request: { node, command, stdin } };
}
