// A seat's solution runs as the seat's own user, who has no Docker; its `docker exec <node> …`
// goes through the runner (docker-relay.ts). Attacked here the way a learner would: from the
// seat's own shell (every other docker call, other nodes, extra flags) and from another seat's uid
// (connecting to this seat's socket), besides the journey that must keep working: Apply solution
// on first-service's proxy-mode step, whose answer is `$(docker exec <node> curl …)`.
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CommandError, run, type CommandResult, type RunOptions } from '../base/exec.ts';
import type { ClusterHandle } from '../clusters/handle.ts';
import { dropTo, runAsUser, type ShellUser } from '../terminals/shell-user.ts';
import { startServer } from '../server/http.ts';
import { applyEnv, shimScript, useDoubles, writeKubeconfig, type Doubles } from '../../test/fixtures/doubles.ts';
import { firstServiceScenario } from '../../test/fixtures/first-service-scenario.ts';
import { openDockerRelay, REFUSED_EXIT, relayRoot, type DockerRelay } from './docker-relay.ts';

const asRoot = process.platform === 'linux' && process.getuid?.() === 0;
const SEAT: ShellUser = { uid: 2_000_036_001, gid: 2_000_036_001 };
const OTHER_SEAT: ShellUser = { uid: 2_000_036_002, gid: 2_000_036_002 };
const SYSTEM_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];
const NODES = ['dplab-iptables-control-plane', 'dplab-iptables-worker', 'dplab-iptables-worker2'];

/** A seat's root-owned folder, as the portal's local backend makes it (root:<seat gid>, 0710). */
function seatFolder(dir: string, user: ShellUser): void {
  mkdirSync(dir, { recursive: true });
  chownSync(dir, 0, user.gid);
  chmodSync(dir, 0o710);
}

/** A command as `user`, its end whatever the exit code. */
async function asUser(user: ShellUser, file: string, args: string[], opts: RunOptions = {}): Promise<CommandResult> {
  try {
    return await runAsUser(user, file, args, opts);
  } catch (err) {
    if (err instanceof CommandError) return err;
    throw err;
  }
}

describe.runIf(asRoot)("a seat's docker relay", { timeout: 60_000 }, () => {
  let top: string;
  let restore: () => void;
  let relay: DockerRelay | undefined;
  const execs: { node: string; args: readonly string[]; input?: string; uid: number }[] = [];
  const cluster = {
    mode: 'iptables',
    name: 'dplab-iptables',
    nodes: async () => [...NODES],
    async nodeExec(node: string, args: readonly string[], opts?: RunOptions) {
      execs.push({ node, args, input: opts?.input, uid: process.getuid!() });
      return { command: '', file: 'docker', args, exitCode: 0, stdout: `ran on ${node}: ${args.join(' ')}\n`, stderr: '', durationMs: 1 };
    },
  } as unknown as ClusterHandle;

  beforeEach(() => {
    top = mkdtempSync(join(tmpdir(), 'dplab-relay-'));
    chmodSync(top, 0o711);
    // Open to cross (the portal's seat folder is closed to other seats as well): the relay's own
    // folder and socket are what keep another seat out here.
    const seat = join(top, 'seat');
    mkdirSync(seat, { mode: 0o711 });
    restore = applyEnv({ DPLAB_STATE_DIR: seat });
    execs.length = 0;
  });
  afterEach(async () => {
    await relay?.close();
    relay = undefined;
    restore();
    rmSync(top, { recursive: true, force: true });
  });

  it("runs the seat's docker exec through the cluster handle's node exec, as the runner, with stdin for -i", async () => {
    relay = await openDockerRelay(cluster, SEAT);
    const docker = join(relay.bin, 'docker');
    const r = await asUser(SEAT, docker, ['exec', NODES[0]!, 'curl', '-s', 'http://127.0.0.1:10249/proxyMode']);
    expect(r.stdout).toBe(`ran on ${NODES[0]}: curl -s http://127.0.0.1:10249/proxyMode\n`);
    expect(r.exitCode).toBe(0);
    const piped = await asUser(SEAT, docker, ['exec', '-i', NODES[1]!, 'cat'], { input: 'from the seat\n' });
    expect(piped.exitCode).toBe(0);
    expect(execs).toEqual([
      { node: NODES[0], args: ['curl', '-s', 'http://127.0.0.1:10249/proxyMode'], input: undefined, uid: 0 },
      { node: NODES[1], args: ['cat'], input: 'from the seat\n', uid: 0 },
    ]);
  });

  it("refuses docker run, another seat's node and every flag that changes who or where, and runs none of them", async () => {
    relay = await openDockerRelay(cluster, SEAT);
    const docker = join(relay.bin, 'docker');
    const attempts: [string[], RegExp][] = [
      [['run', '--rm', '--privileged', '-v', '/:/host', 'alpine', 'chroot', '/host'], /`docker run` is not available/],
      [['exec', 'dplab-s2-iptables-worker', 'iptables-save'], /dplab-s2-iptables-worker is not one of them/],
      [['exec', '--privileged', NODES[1]!, 'sh'], /--privileged is not allowed/],
      [['exec', '-u', '0', NODES[1]!, 'id'], /-u is not allowed/],
      [['exec', '--env', 'X=1', NODES[1]!, 'env'], /--env is not allowed/],
      [['ps'], /`docker ps` is not available/],
    ];
    for (const [argv, message] of attempts) {
      const r = await asUser(SEAT, docker, argv);
      expect(r.exitCode, argv.join(' ')).toBe(REFUSED_EXIT);
      expect(r.stderr).toMatch(message);
    }
    // Past the shim, straight to the socket: the runner decides, not the client.
    const direct = await asUser(SEAT, process.execPath, [
      '-e',
      `const s=require('node:net').connect(process.argv[1]);s.on('connect',()=>s.write(JSON.stringify({argv:['run','alpine']})+'\\n'));s.pipe(process.stdout)`,
      relay.socket,
    ]);
    expect(JSON.parse(direct.stdout)).toMatchObject({ exit: REFUSED_EXIT, stderr: expect.stringMatching(/`docker run` is not available/) });
    expect(execs).toEqual([]);
  });

  it("cannot be reached from another seat's uid", async () => {
    relay = await openDockerRelay(cluster, SEAT);
    const tryConnect = `const s=require('node:net').connect(process.argv[1]);s.on('connect',()=>{s.write(JSON.stringify({argv:['exec',${JSON.stringify(NODES[1])},'id']})+'\\n')});s.on('data',d=>process.stdout.write(d));s.on('error',e=>{console.log(e.code);process.exit(3)})`;
    const prefix = dropTo(OTHER_SEAT);
    const other = await run(prefix[0]!, [...prefix.slice(1), process.execPath, '-e', tryConnect, relay.socket]).catch(
      (e: CommandError) => e,
    );
    expect(other.stdout.trim()).toBe('EACCES');
    // Nor through the shim: it is in the same closed folder.
    const shim = await run(prefix[0]!, [...prefix.slice(1), join(relay.bin, 'docker'), 'exec', NODES[1]!, 'id']).catch(
      (e: CommandError) => e,
    );
    expect(shim.exitCode).not.toBe(0);
    expect(execs).toEqual([]);
    // The seat itself can (the same script, its own uid).
    const own = await asUser(SEAT, process.execPath, ['-e', tryConnect, relay.socket]);
    expect(JSON.parse(own.stdout)).toMatchObject({ exit: 0 });
  });

  it('is gone when the solve ends, and a relay left by a killed runner goes at the next start', async () => {
    relay = await openDockerRelay(cluster, SEAT);
    const { socket } = relay;
    expect(existsSync(socket)).toBe(true);
    await relay.close();
    relay = undefined;
    expect(existsSync(socket)).toBe(false);
    expect(readdirSync(relayRoot())).toEqual([]);
  });
});

describe.runIf(asRoot)('Apply solution in a seat with its own user, over the doubles', { timeout: 120_000 }, () => {
  const TOKEN = 'relay-test-token-0123456789abcdef';
  let doubles: Doubles;
  let restore: () => void;

  beforeEach(() => {
    // Docker is root's on the host: its double is in a folder the seat's user cannot enter (a real
    // docker client further on PATH finds no daemon it may use).
    doubles = useDoubles(firstServiceScenario('iptables'), { without: ['docker'], pathRest: SYSTEM_PATH });
    const rootBin = join(doubles.dir, 'root-bin');
    mkdirSync(rootBin, { mode: 0o700 });
    writeFileSync(join(rootBin, 'docker'), shimScript('docker'), { mode: 0o755 });
    // The seat's user runs kubectl's double too: it reads the scenario and writes the state and log.
    chmodSync(doubles.dir, 0o777);
    for (const f of ['scenario.json', 'state.json', 'calls.jsonl']) chmodSync(join(doubles.dir, f), 0o666);
    const state = doubles.env.DPLAB_STATE_DIR!;
    seatFolder(state, SEAT);
    restore = applyEnv({
      ...doubles.env,
      PATH: [rootBin, doubles.env.PATH].join(delimiter),
      DPLAB_SHELL_USER: `${SEAT.uid}:${SEAT.gid}`,
    });
    writeKubeconfig('iptables');
  });
  afterEach(() => {
    restore();
    doubles.cleanup();
  });

  it("solves first-service's proxy-mode: its $(docker exec …) reaches the node through the runner, and the check passes", async () => {
    // A relay a killed runner left behind: the runner's start sweeps it.
    const stale = join(relayRoot(), 'stale');
    mkdirSync(stale, { recursive: true });
    const siteDir = mkdtempSync(join(tmpdir(), 'dplab-site-'));
    const server = await startServer({ port: 0, portExplicit: true, token: TOKEN, siteDir });
    const origin = `http://127.0.0.1:${server.port}`;
    const api = (path: string, body: unknown) =>
      fetch(`${origin}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, origin, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }));
    try {
      expect(existsSync(stale)).toBe(false);
      const solve = await api('/api/labs/first-service/steps/proxy-mode/solve', { mode: 'iptables' });
      expect(solve.status, JSON.stringify(solve.json)).toBe(200);
      expect(doubles.commandLines()).toContain('docker exec dplab-iptables-control-plane curl -s http://127.0.0.1:10249/proxyMode');
      expect(doubles.commandLines().some((l) => /create configmap proxy-mode --from-literal=mode=iptables$/.test(l))).toBe(true);
      const check = await api('/api/labs/first-service/steps/proxy-mode/check', { mode: 'iptables' });
      expect(check.json.status, JSON.stringify(check.json)).toBe('pass');
      // Nothing of the solve's relay is left.
      expect(readdirSync(relayRoot())).toEqual([]);
    } finally {
      await server.close();
      rmSync(siteDir, { recursive: true, force: true });
    }
  });
});
