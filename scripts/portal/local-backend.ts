/**
 * The `local` seat backend: each seat is its own `dplab serve` process on this host, on a
 * loopback port of its own, with its own state folder (`<portal state>/seats/<id>`), its own
 * runner token (from the portal, passed in the child's environment only) and clusters named
 * per seat (`DPLAB_SEAT=<id>` → `dplab-<id>-<mode>`).
 *
 * Each seat's folder holds `seat.json` (its runner's pid, port and token; mode 0600), so that a
 * portal started again after a crash finds the seats an earlier run left: they are listed as
 * failed ("left by an earlier run") until the portal takes them back (resume(): a runner started
 * again over the same folder, as the same seat user, with the token the portal kept) or deletes
 * them (their clusters through their runner if it still answers, or with `dplab down --all` in
 * the seat's folder if not).
 *
 * With `seatUsers` (the portal run as root on Linux, `dplab portal`'s default there) each seat's
 * shells run as a Unix user of the seat's own, and one seat's shell cannot read another seat's
 * folder, kubeconfig, token or processes' environments (seat-users.ts). Without it a learner's
 * terminal is a shell as the portal's user, which can read every seat's folder: the portal keeps
 * learners apart (tokens, routing), the host does not. Either way a node shell is root in a node
 * (a privileged container under kind): for a room of strangers use the kubernetes backend.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../base/paths.ts';
import { DplabError } from '../base/errors.ts';
import { pidAlive } from '../base/file-lock.ts';
import { run } from '../base/exec.ts';
import { isSeatId } from '../wire/seat.ts';
import type { SeatBackend, SeatEndpoint, SeatSpec, SeatStatus } from './seat-backend.ts';
import { SeatClient, warmUp } from './seat-client.ts';
import { checkReachable, prepareSeatFolder, seatFolderUser, type SeatUsers } from './seat-users.ts';
import { SHELL_USER_VAR, type ShellUser } from '../terminals/shell-user.ts';
import { SEAT_CGROUP_VAR, type SeatCgroups } from '../terminals/seat-cgroup.ts';
import { seatBaseEnv } from '../terminals/seat-env.ts';

const LOCAL_SEAT_TIMEOUTS = {
  /**
   * A runner prints its link within this long. It takes ~2 s on an idle host (tsx compiles the
   * CLI), far longer on a host busy with a class's clusters starting; this is a deadline, not a pace.
   */
  startMs: 180_000,
  /** SIGTERM, then SIGKILL after this long. */
  stopGraceMs: 5_000,
  /** Each warm cluster (kind create, CNI, images) must be ready within this long. */
  warmMs: 15 * 60_000,
  /** Cluster status is read this often while warming. */
  warmPollMs: 1_000,
  /** Deleting one cluster through the runner. */
  deleteMs: 5 * 60_000,
} as const;

export interface LocalBackendOptions {
  /** The portal's state folder; seats live in `<stateDir>/seats/<id>`. */
  stateDir: string;
  /** Extra environment for one seat's runner (tests give each seat its own test-double state). */
  seatEnv?: (id: string) => Record<string, string>;
  /** Terminals per seat (`dplab serve --max-terminals`). */
  maxTerminals?: number;
  /** Seats started (runner and warm clusters) at once; the rest wait their turn (LOCAL_SEAT_START_CONCURRENCY). */
  startConcurrency?: number;
  /** A Unix user per seat for its shells (the portal must be root); absent: shells run as the portal's user. */
  seatUsers?: SeatUsers;
  /** A cgroup per seat user with its process and memory limits (the host has cgroups, seat-cgroup.ts); absent: rlimits only. */
  seatCgroups?: SeatCgroups;
}

/** Each warm seat runs `kind create` and a CNI rollout; more at once than this thrashes a host's disk and CPU. */
const LOCAL_SEAT_START_CONCURRENCY = 3;

interface LocalSeat {
  spec: SeatSpec;
  dir: string;
  child?: ChildProcess;
  status: SeatStatus;
  exited: Promise<void>;
  log: string;
  /** A seat an earlier run of the portal left: its runner, if still alive, is not our child. */
  leftover?: { pid?: number; port?: number };
  /** The seat's own Unix user, when the backend has seat users. */
  user?: ShellUser;
  /** Why a leftover seat's user could not be taken back (another portal holds it now). */
  userProblem?: string;
}

/** What `seat.json` in a seat's folder says once its runner has started. */
interface SeatRecord {
  id: string;
  pid: number;
  port: number;
  runnerToken: string;
}

const RECORD = 'seat.json';
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'];

function readRecord(dir: string): SeatRecord | null {
  try {
    const r = JSON.parse(readFileSync(join(dir, RECORD), 'utf8')) as Partial<SeatRecord>;
    return typeof r.pid === 'number' && typeof r.port === 'number' && typeof r.runnerToken === 'string' && typeof r.id === 'string'
      ? (r as SeatRecord)
      : null;
  } catch {
    return null;
  }
}

/** Is `pid` still the runner of the seat in `dir` (not a process that got its number since)? Linux: its environment says so. */
function isSeatRunner(pid: number, dir: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`DPLAB_STATE_DIR=${dir}`);
  } catch {
    return false;
  }
}

const LINK = /Dataplane Lab: http:\/\/127\.0\.0\.1:(\d+)\//;

export class LocalSeatBackend implements SeatBackend {
  readonly kind = 'local' as const;
  readonly #seats = new Map<string, LocalSeat>();
  readonly #waiting: (() => void)[] = [];
  #starting = 0;

  constructor(private readonly opts: LocalBackendOptions) {
    // Seat users must reach their own folders (their shell starts in one). The checkout they only
    // need for the `dplab` command in their shells, which says "permission denied" without it.
    if (opts.seatUsers) checkReachable([join(opts.stateDir, 'seats')]);
    this.#findLeftovers();
    // Seat cgroups of seats gone while no portal ran (a crash, then their folders removed): kept
    // are the seats just found (taken back with their cgroups) and another live portal's.
    const users = opts.seatUsers;
    if (users) opts.seatCgroups?.sweep((uid) => users.inUse(uid));
  }

  /** Seats whose folders an earlier run of the portal left (a crash, a kill): known, failed, deletable. */
  #findLeftovers(): void {
    let ids: string[];
    try {
      ids = readdirSync(join(this.opts.stateDir, 'seats')).filter((d) => isSeatId(d));
    } catch {
      return;
    }
    for (const id of ids) {
      const dir = this.seatDir(id);
      const record = readRecord(dir);
      this.#seats.set(id, {
        spec: { id, runnerToken: record?.runnerToken ?? '', warm: [] },
        dir,
        status: {
          id,
          phase: 'failed',
          message: `Left by an earlier run of the portal (${record && isSeatRunner(record.pid, dir) ? `runner ${record.pid} still running` : 'runner gone'}); delete it.`,
        },
        exited: Promise.resolve(),
        log: '',
        leftover: { pid: record?.pid, port: record?.port },
        ...this.#adopt(dir),
      });
    }
  }

  /** A leftover seat's user (its folder's group), kept from new seats until the seat is deleted. */
  #adopt(dir: string): { user?: ShellUser; userProblem?: string } {
    const users = this.opts.seatUsers;
    if (!users) return {};
    const user = seatFolderUser(dir, users);
    if (!user) return { userProblem: 'its folder no longer names its seat user' };
    const adopted = users!.adopt(user.uid, dir);
    if (!adopted.ok)
      return { userProblem: `its seat user (uid ${user.uid}) is held by another portal on this host now (pid ${adopted.holder})` };
    return { user };
  }

  /** Ids of the seats an earlier run of the portal left and that are not deleted yet. */
  leftovers(): string[] {
    return [...this.#seats.values()].filter((s) => s.leftover && s.status.phase !== 'deleted').map((s) => s.spec.id);
  }

  /** The folder of a seat (for tests and the operator's guide). */
  seatDir(id: string): string {
    return join(this.opts.stateDir, 'seats', id);
  }

  /** Process ids of the seat runners alive now. */
  pids(): number[] {
    return [...this.#seats.values()].flatMap((s) =>
      s.child?.pid && s.child.exitCode === null && s.child.signalCode === null ? [s.child.pid] : [],
    );
  }

  async create(spec: SeatSpec): Promise<SeatStatus> {
    if (!isSeatId(spec.id)) throw new DplabError(`"${String(spec.id).slice(0, 40)}" is not a seat id.`, { status: 400 });
    const known = this.#seats.get(spec.id);
    if (known && known.status.phase !== 'deleted') return { ...known.status };
    const seat: LocalSeat = {
      spec,
      dir: this.seatDir(spec.id),
      status: { id: spec.id, phase: 'pending', message: 'Waiting for a turn to start…' },
      exited: Promise.resolve(),
      log: '',
      user: this.opts.seatUsers?.take(this.seatDir(spec.id)),
    };
    this.#seats.set(spec.id, seat);
    void this.#inTurn(() => this.#bringUp(seat));
    return { ...seat.status };
  }

  /** Run `work` when fewer than startConcurrency seats are starting. */
  async #inTurn(work: () => Promise<void>): Promise<void> {
    const limit = this.opts.startConcurrency ?? LOCAL_SEAT_START_CONCURRENCY;
    if (this.#starting >= limit) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#starting++;
    try {
      await work();
    } finally {
      this.#starting--;
      this.#waiting.shift()?.();
    }
  }

  /** A seat's processes' environment: the allow-listed part of the portal's (seat-env.ts), plus the seat's folder and id. */
  #seatEnv(id: string, dir: string): Record<string, string> {
    return { ...seatBaseEnv(process.env), ...this.opts.seatEnv?.(id), DPLAB_STATE_DIR: dir, DPLAB_SEAT: id };
  }

  #spawn(seat: LocalSeat): ChildProcess {
    const { spec, dir } = seat;
    mkdirSync(dir, { recursive: true });
    const env: Record<string, string> = { ...this.#seatEnv(spec.id, dir), DPLAB_TOKEN: spec.runnerToken };
    if (seat.user) {
      prepareSeatFolder(dir, seat.user);
      env[SHELL_USER_VAR] = `${seat.user.uid}:${seat.user.gid}`;
      // Every process of the seat's user starts inside these (dropTo in shell-user.ts).
      if (this.opts.seatCgroups) env[SEAT_CGROUP_VAR] = this.opts.seatCgroups.create(seat.user.uid).join(':');
    }
    const args = [join(projectRoot, 'scripts', 'dplab.mjs'), 'serve', '--host', '127.0.0.1', '--port', '0'];
    if (this.opts.maxTerminals) args.push('--max-terminals', String(this.opts.maxTerminals));
    // The runner dies with the portal, even a portal killed with SIGKILL (seat-watchdog.ts).
    const setpriv = process.platform === 'linux' ? SETPRIV.find((p) => existsSync(p)) : undefined;
    const child = setpriv
      ? spawn(setpriv, ['--pdeathsig=KILL', '--', process.execPath, ...args], { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(process.execPath, args, { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    seat.child = child;
    seat.status = { id: spec.id, phase: 'pending', message: 'Starting the runner…' };
    seat.exited = new Promise((resolve) => child.once('close', () => resolve()));
    const keep = (d: Buffer) => {
      // The last few KiB are enough to say why a runner died.
      seat.log = (seat.log + d.toString('utf8')).slice(-8_000);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    child.once('error', (err) => this.#fail(seat, `The seat's runner could not start: ${err.message}`));
    void seat.exited.then(() => {
      if (seat.status.phase === 'pending' || seat.status.phase === 'ready')
        this.#fail(seat, `The seat's runner stopped (exit ${child.exitCode ?? child.signalCode}). ${lastLine(seat.log)}`);
    });
    return child;
  }

  /**
   * A seat an earlier portal left, served again: whatever is left of its runner stopped, a new one
   * started over the same folder (workspace, progress, kubeconfigs) as the same seat user, with
   * the token the portal kept; its port is a new one, behind the same portal route.
   */
  async resume(spec: SeatSpec): Promise<SeatStatus> {
    const seat = this.#seats.get(spec.id);
    if (!seat || seat.status.phase === 'deleted')
      throw new DplabError(`There is no seat ${spec.id.slice(0, 40)} to take back.`, { status: 404 });
    if (!seat.leftover) return { ...seat.status };
    // Never a learner's shells as root: a seat whose user is not known again is not taken back.
    if (this.opts.seatUsers && !seat.user)
      throw new DplabError(`Seat ${spec.id} is left as it is: ${seat.userProblem ?? 'its seat user is not known'}.`, { status: 409 });
    const { pid } = seat.leftover;
    if (pid !== undefined && isSeatRunner(pid, seat.dir)) await stopProcess(pid);
    seat.leftover = undefined;
    seat.spec = spec;
    seat.status = { id: spec.id, phase: 'pending', message: 'Waiting for a turn to start again…' };
    void this.#inTurn(() => this.#bringUp(seat));
    return { ...seat.status };
  }

  async #bringUp(seat: LocalSeat): Promise<void> {
    // Deleted while it waited for its turn.
    if (seat.status.phase !== 'pending') return;
    const child = this.#spawn(seat);
    const port = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => resolve(null), LOCAL_SEAT_TIMEOUTS.startMs);
      const look = () => {
        const m = LINK.exec(seat.log);
        if (m) {
          clearTimeout(timer);
          child.stdout!.off('data', look);
          resolve(Number(m[1]));
        }
      };
      child.stdout!.on('data', look);
      void seat.exited.then(() => {
        clearTimeout(timer);
        resolve(null);
      });
    });
    if (port === null) {
      if (seat.status.phase === 'pending')
        this.#fail(seat, `The seat's runner did not start within ${LOCAL_SEAT_TIMEOUTS.startMs / 1000} s. ${lastLine(seat.log)}`);
      child.kill('SIGKILL');
      return;
    }
    // The link line carries the token: keep nothing of the runner's output from here on but errors.
    seat.log = '';
    const record: SeatRecord = { id: seat.spec.id, pid: child.pid!, port, runnerToken: seat.spec.runnerToken };
    writeFileSync(join(seat.dir, RECORD), JSON.stringify(record), { mode: 0o600 });
    const endpoint: SeatEndpoint = { url: `http://127.0.0.1:${port}`, host: `127.0.0.1:${port}` };
    const client = new SeatClient(endpoint, seat.spec.runnerToken);
    try {
      await warmUp(client, seat.spec.warm, LOCAL_SEAT_TIMEOUTS, (message) => {
        if (seat.status.phase === 'pending') seat.status = { id: seat.spec.id, phase: 'pending', endpoint, message };
      });
    } catch (err) {
      this.#fail(seat, err instanceof Error ? err.message : String(err), endpoint);
      return;
    }
    if (seat.status.phase === 'pending') seat.status = { id: seat.spec.id, phase: 'ready', endpoint };
  }

  #fail(seat: LocalSeat, message: string, endpoint?: SeatEndpoint): void {
    if (seat.status.phase === 'deleted') return;
    seat.status = { id: seat.spec.id, phase: 'failed', message, ...(endpoint ? { endpoint } : {}) };
  }

  async status(id: string): Promise<SeatStatus> {
    return { ...(this.#seats.get(id)?.status ?? { id, phase: 'deleted' }) };
  }

  async list(): Promise<SeatStatus[]> {
    return [...this.#seats.values()].filter((s) => s.status.phase !== 'deleted').map((s) => ({ ...s.status }));
  }

  async delete(id: string, opts: { signal?: AbortSignal } = {}): Promise<void> {
    const seat = this.#seats.get(id);
    if (!seat || seat.status.phase === 'deleted') return;
    if (seat.leftover) return this.#deleteLeftover(seat, opts);
    const endpoint = seat.status.endpoint;
    const alive = seat.child && seat.child.exitCode === null && seat.child.signalCode === null;
    let clusterError: unknown;
    if (endpoint && alive) {
      try {
        await new SeatClient(endpoint, seat.spec.runnerToken).deleteClusters({
          signal: opts.signal,
          timeoutMs: LOCAL_SEAT_TIMEOUTS.deleteMs,
        });
      } catch (err) {
        clusterError = err;
      }
    }
    if (clusterError) {
      // Keep the runner and its files: its clusters are still there, and it is the only one who knows their kubeconfigs.
      seat.status = { ...seat.status, phase: 'failed', message: `Deleting the seat's clusters failed: ${(clusterError as Error).message}` };
      throw clusterError;
    }
    seat.status = { id, phase: 'deleted' };
    if (seat.child && alive) {
      seat.child.kill('SIGTERM');
      const timer = setTimeout(() => seat.child!.kill('SIGKILL'), LOCAL_SEAT_TIMEOUTS.stopGraceMs);
      await seat.exited;
      clearTimeout(timer);
    }
    await this.#endUser(seat);
    rmSync(seat.dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    this.#seats.delete(id);
  }

  /**
   * A seat an earlier portal left: its clusters through its runner while that still answers to
   * the recorded token, else `dplab down --all` in its folder (its kubeconfigs name them); then
   * the runner's process and the folder.
   */
  async #deleteLeftover(seat: LocalSeat, opts: { signal?: AbortSignal }): Promise<void> {
    const { pid, port } = seat.leftover ?? {};
    const alive = pid !== undefined && isSeatRunner(pid, seat.dir);
    let viaRunner = false;
    if (alive && port !== undefined) {
      const endpoint: SeatEndpoint = { url: `http://127.0.0.1:${port}`, host: `127.0.0.1:${port}` };
      try {
        await new SeatClient(endpoint, seat.spec.runnerToken).deleteClusters({
          signal: opts.signal,
          timeoutMs: LOCAL_SEAT_TIMEOUTS.deleteMs,
        });
        viaRunner = true;
      } catch {
        // Not our runner any more (or not answering): fall back to the CLI below.
      }
    }
    if (alive) await stopProcess(pid);
    if (!viaRunner) {
      const env = this.#seatEnv(seat.spec.id, seat.dir);
      try {
        await run(process.execPath, [join(projectRoot, 'scripts', 'dplab.mjs'), 'down', '--all'], {
          cwd: projectRoot,
          env,
          timeoutMs: LOCAL_SEAT_TIMEOUTS.deleteMs,
          signal: opts.signal,
        });
      } catch (err) {
        seat.status = {
          ...seat.status,
          phase: 'failed',
          message: `Deleting the clusters of a seat an earlier portal left failed: ${(err as Error).message}`,
        };
        throw err;
      }
    }
    seat.status = { id: seat.spec.id, phase: 'deleted' };
    await this.#endUser(seat);
    rmSync(seat.dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    this.#seats.delete(seat.spec.id);
  }

  /** Whatever the seat's user still runs (a shell's `nohup … &`) ends before its uid can go to another seat; then its cgroup goes. */
  async #endUser(seat: LocalSeat): Promise<void> {
    if (!seat.user) return;
    await this.opts.seatUsers?.release(seat.user);
    await this.opts.seatCgroups?.remove(seat.user.uid);
  }
}

/** SIGTERM a process that is not our child, SIGKILL after the grace period; resolves once it is gone. */
async function stopProcess(pid: number): Promise<void> {
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(pid, sig);
    } catch {
      // gone already
    }
  };
  signal('SIGTERM');
  const end = Date.now() + LOCAL_SEAT_TIMEOUTS.stopGraceMs;
  while (pidAlive(pid) && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
  if (pidAlive(pid)) signal('SIGKILL');
  while (pidAlive(pid) && Date.now() < end + 5_000) await new Promise((r) => setTimeout(r, 100));
}

function lastLine(log: string): string {
  const lines = log.trim().split('\n');
  return lines[lines.length - 1]?.slice(0, 400) ?? '';
}
