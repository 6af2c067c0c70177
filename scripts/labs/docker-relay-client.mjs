// The `docker` a seat's solution runs (docker-relay.ts writes the shim that starts this with the
// runner's Node): it hands the argv, and for `docker exec -i` what was piped in, to the runner's
// socket named by DPLAB_DOCKER_RELAY, prints what comes back and exits with its code. The runner
// decides what may run; this only carries it. Plain JS and Node's own modules: a seat has nothing else.
import { connect } from 'node:net';

const REFUSED_EXIT = 125;
const MAX_STDIN = 1024 * 1024 - 64 * 1024;
const argv = process.argv.slice(2);

function fail(message) {
  process.stderr.write(`dplab: ${message}\n`);
  process.exit(REFUSED_EXIT);
}

/** Same rule as docker-exec-request.ts's wantsStdin: `-i` among the options before the node. */
function wantsStdin() {
  if (argv[0] !== 'exec') return false;
  for (const a of argv.slice(1)) {
    if (!a.startsWith('-')) return false;
    if (a === '-i' || a === '--interactive') return true;
  }
  return false;
}

async function readStdin() {
  const chunks = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += chunk.length;
    if (size > MAX_STDIN) fail(`docker exec -i takes at most ${MAX_STDIN} bytes of input here.`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const socketPath = process.env.DPLAB_DOCKER_RELAY;
if (!socketPath) fail("this docker runs only inside a seat's solution (DPLAB_DOCKER_RELAY is not set).");
const request = { argv };
if (wantsStdin()) request.stdin = await readStdin();

const sock = connect(socketPath);
const chunks = [];
sock.on('error', (err) => fail(`cannot reach the runner for docker exec: ${err.message}`));
sock.on('connect', () => sock.write(`${JSON.stringify(request)}\n`));
sock.on('data', (c) => chunks.push(c));
sock.on('end', () => {
  let answer;
  try {
    answer = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    fail('the runner ended the docker call without an answer.');
  }
  process.stdout.write(answer.stdout ?? '', () =>
    process.stderr.write(answer.stderr ?? '', () => process.exit(Number.isInteger(answer.exit) ? answer.exit : REFUSED_EXIT)),
  );
});
