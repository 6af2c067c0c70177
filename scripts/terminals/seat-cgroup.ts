/**
 * Per-seat process and memory limits as cgroups, where the host has them (issue 36: a fork bomb in
 * one seat took the host). What the host offers is found once, at portal start:
 *
 * - **v2**: a `cgroup2` mount at /sys/fs/cgroup whose `cgroup.controllers` (of the portal's parent
 *   cgroup) has `pids` and `memory`, and `+pids +memory` can be written to its
 *   `cgroup.subtree_control`: one cgroup per seat, `<parent>/dplab/seat-<uid>`, with `pids.max`,
 *   `memory.max` and `memory.swap.max` 0 (when present). A sibling of the portal's own cgroup,
 *   since v2 puts no processes in a cgroup whose controllers are handed to its children.
 * - **v1**: `pids` and `memory` hierarchies (also a hybrid host's, whose cgroup2 mount sits at
 *   /sys/fs/cgroup/unified without controllers): a cgroup per seat in each, under the portal's own
 *   (`<own>/dplab/seat-<uid>`, so whatever bounds the portal bounds the seats too), with
 *   `pids.max` and `memory.limit_in_bytes` (and `memory.memsw.limit_in_bytes` the same, when swap
 *   is accounted: no swapping past the limit).
 * - **none** (or the portal is not root): the rlimits alone (shell-user.ts), which every seat
 *   process gets in every case.
 *
 * The cgroup holds everything the seat's user runs (shells, solutions, lab-file writes): the
 * root-side wrapper that starts each one writes its own pid into `cgroup.procs` before it drops
 * to the seat's user (enterArgv, used by dropTo in shell-user.ts), so every child is born inside,
 * and the cgroup's files stay root's (0644), so the seat's user cannot raise a limit or move out.
 * The seat's runner (root) is not in it: the limits bound what a learner runs, and a learner's
 * allocation is what the memory limit's OOM kill then ends, never the runner serving the seat.
 * Named by the seat's uid, unique on the host (seat-users.ts), so two portals never share one.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DplabError } from '../base/errors.ts';

/** A seat's share of the host: processes (threads count too) and memory, swap included. */
export interface SeatLimits {
  pids: number;
  memoryBytes: number;
}

export const SEAT_CGROUP_DEFAULTS: SeatLimits = { pids: 512, memoryBytes: 2 * 1024 ** 3 };

/** The runner's variable naming the `cgroup.procs` files its seat user's processes enter (colon-separated). */
export const SEAT_CGROUP_VAR = 'DPLAB_SEAT_CGROUP';

export type CgroupHost =
  /** `dirs`: the folders seat cgroups are made in (one for v2, the pids then the memory hierarchy's for v1). */
  { kind: 'v2' | 'v1'; dirs: string[] } | { kind: 'none'; reason: string };

export interface DetectInput {
  /** /proc/self/mountinfo's text. */
  mountinfo: string;
  /** /proc/self/cgroup's text. */
  selfCgroup: string;
  isRoot: boolean;
}

function hostInput(): DetectInput {
  const read = (f: string) => {
    try {
      return readFileSync(f, 'utf8');
    } catch {
      return '';
    }
  };
  return { mountinfo: read('/proc/self/mountinfo'), selfCgroup: read('/proc/self/cgroup'), isRoot: process.getuid?.() === 0 };
}

interface Mount {
  root: string;
  point: string;
  type: string;
  superOptions: string[];
}

function mounts(mountinfo: string): Mount[] {
  const out: Mount[] = [];
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const f = left.split(' ');
    const [type = '', , opts = ''] = right.split(' ');
    const unescape = (s: string) => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
    if (f[3] && f[4]) out.push({ root: unescape(f[3]), point: unescape(f[4]), type, superOptions: opts.split(',') });
  }
  return out;
}

/** The portal's own cgroup path in a hierarchy (`0::/x` for v2, `N:pids:/x` for v1), from /proc/self/cgroup. */
function ownPath(selfCgroup: string, controller: string | null): string | null {
  for (const line of selfCgroup.split('\n')) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    if (controller === null ? m[1] === '0' && m[2] === '' : m[2]!.split(',').includes(controller)) return m[3]!;
  }
  return null;
}

/** Where `path` of the hierarchy is, given the mount (its root may be a cgroup below the hierarchy's root, in a container). */
function inMount(m: Mount, path: string): string | null {
  const root = m.root === '/' ? '' : m.root;
  if (root && path !== root && !path.startsWith(`${root}/`)) return null;
  return join(m.point, path.slice(root.length));
}

function hasControllers(file: string, wanted: readonly string[]): boolean {
  try {
    const have = readFileSync(file, 'utf8').trim().split(/\s+/);
    return wanted.every((c) => have.includes(c));
  } catch {
    return false;
  }
}

/**
 * What the host offers for seat limits. `fsRoot` prefixes every cgroup path read or written (the
 * tests pass a fake folder); v2 is taken only once `+pids +memory` could be written to the parent's
 * `cgroup.subtree_control`.
 */
export function detectCgroups(input: DetectInput = hostInput(), fsRoot = ''): CgroupHost {
  if (!input.isRoot) return { kind: 'none', reason: 'the portal is not root' };
  const all = mounts(input.mountinfo);
  const unified = all.find((m) => m.type === 'cgroup2' && m.point === '/sys/fs/cgroup');
  if (unified) {
    const own = ownPath(input.selfCgroup, null);
    const ownDir = own === null ? null : inMount(unified, own);
    if (ownDir === null) return { kind: 'none', reason: "the portal's own cgroup is not under /sys/fs/cgroup" };
    // The portal's parent: its own cgroup, holding the portal, cannot hand controllers to children (v2's no-internal-process rule).
    const parent = fsRoot + (ownDir === unified.point ? ownDir : dirname(ownDir));
    if (!hasControllers(join(parent, 'cgroup.controllers'), ['pids', 'memory']))
      return { kind: 'none', reason: `cgroup v2 without the pids and memory controllers at ${parent.slice(fsRoot.length)}` };
    try {
      writeFileSync(join(parent, 'cgroup.subtree_control'), '+pids +memory');
    } catch (err) {
      return {
        kind: 'none',
        reason: `cgroup v2, but pids and memory cannot be enabled below ${parent.slice(fsRoot.length)} (${(err as Error).message})`,
      };
    }
    return { kind: 'v2', dirs: [join(parent, 'dplab')] };
  }
  const dirs: string[] = [];
  for (const controller of ['pids', 'memory']) {
    const m = all.find((x) => x.type === 'cgroup' && x.superOptions.includes(controller));
    const own = ownPath(input.selfCgroup, controller);
    const dir = m && own !== null ? inMount(m, own) : null;
    if (!dir || !existsSync(fsRoot + dir)) return { kind: 'none', reason: `no cgroup ${controller} hierarchy` };
    dirs.push(join(fsRoot + dir, 'dplab'));
  }
  return { kind: 'v1', dirs };
}

/** Bytes from `2G`, `512M`, `64MiB`, `1048576`. */
function parseBytes(text: string): number | null {
  const m = /^(\d+)\s*([KMGT]?)(i?B)?$/i.exec(text.trim());
  if (!m) return null;
  const power = ' KMGT'.indexOf((m[2] || ' ').toUpperCase());
  return Number(m[1]) * 1024 ** power;
}

/** The operator's limits: `--seat-memory` / `--seat-pids`, else DPLAB_SEAT_MEMORY / DPLAB_SEAT_PIDS, else the defaults. */
export function seatLimits(given: { memory?: string; pids?: string } = {}, env: NodeJS.ProcessEnv = process.env): SeatLimits {
  const memoryText = given.memory ?? env.DPLAB_SEAT_MEMORY;
  const pidsText = given.pids ?? env.DPLAB_SEAT_PIDS;
  const memoryBytes = memoryText === undefined || memoryText === '' ? SEAT_CGROUP_DEFAULTS.memoryBytes : parseBytes(memoryText);
  if (memoryBytes === null || memoryBytes < 32 * 1024 ** 2)
    throw new DplabError(`A seat's memory limit takes a size of 32M or more (e.g. 2G, 512M), got "${String(memoryText).slice(0, 40)}".`);
  const pids = pidsText === undefined || pidsText === '' ? SEAT_CGROUP_DEFAULTS.pids : Number(pidsText);
  if (!Number.isInteger(pids) || pids < 16 || pids > 1_000_000)
    throw new DplabError(`A seat's process limit takes a whole number 16–1000000, got "${String(pidsText).slice(0, 40)}".`);
  return { pids, memoryBytes };
}

/** Limits in words, for the portal's start and the guide. */
export function describeLimits(host: CgroupHost, limits: SeatLimits): string {
  if (host.kind === 'none') return `Seat limits: rlimits only (${host.reason}): no cgroup bounds a seat's total memory.`;
  const mib = limits.memoryBytes / 1024 ** 2;
  const memory = mib >= 1024 && mib % 1024 === 0 ? `${mib / 1024} GiB` : `${mib} MiB`;
  return `Seat limits: cgroup ${host.kind}, ${limits.pids} processes and ${memory} of memory per seat, plus rlimits.`;
}

const SEAT_DIR = /^seat-(\d{1,10})$/;

/** The seat cgroups of one portal: made when a seat starts, removed when it is deleted, swept when stale. */
export class SeatCgroups {
  constructor(
    readonly host: Extract<CgroupHost, { dirs: string[] }>,
    readonly limits: SeatLimits,
  ) {}

  #dirs(uid: number): string[] {
    return this.host.dirs.map((d) => join(d, `seat-${uid}`));
  }

  /** Makes (or finds again, on a restart) the seat's cgroup(s) with their limits; the `cgroup.procs` files to enter. */
  create(uid: number): string[] {
    const { pids, memoryBytes } = this.limits;
    const procs: string[] = [];
    for (const [i, dir] of this.#dirs(uid).entries()) {
      if (this.host.kind === 'v2') {
        mkdirSync(dirname(dir), { recursive: true });
        writeFileSync(join(dirname(dir), 'cgroup.subtree_control'), '+pids +memory');
      }
      mkdirSync(dir, { recursive: true });
      const set = (file: string, value: number | string, optional = false) => {
        if (optional && !existsSync(join(dir, file))) return;
        writeFileSync(join(dir, file), String(value));
      };
      if (this.host.kind === 'v2') {
        set('pids.max', pids);
        set('memory.max', memoryBytes);
        set('memory.swap.max', 0, true);
      } else if (i === 0) set('pids.max', pids);
      else {
        // memsw is at least the memory limit: lowered after, raised before it.
        const memsw = join(dir, 'memory.memsw.limit_in_bytes');
        const swap = existsSync(memsw);
        if (swap && memoryBytes > Number(readFileSync(memsw, 'utf8'))) set('memory.memsw.limit_in_bytes', memoryBytes);
        set('memory.limit_in_bytes', memoryBytes);
        if (swap) set('memory.memsw.limit_in_bytes', memoryBytes);
      }
      procs.push(join(dir, 'cgroup.procs'));
    }
    return procs;
  }

  /**
   * Removes the seat's cgroup(s) once its processes are gone (its user's were ended before): what
   * is still inside is killed, then each folder removed, waiting a little for the last to be reaped.
   */
  async remove(uid: number): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (const dir of this.#dirs(uid)) {
      for (;;) {
        for (const pid of readPids(dir))
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // gone already
          }
        try {
          rmdirSync(dir);
          break;
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (code === 'ENOENT') break;
          if (code !== 'EBUSY' || Date.now() > deadline)
            throw new DplabError(`Could not remove the seat cgroup ${dir}: ${(err as Error).message}`, { cause: err });
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    }
    this.#dropEmptyBases();
  }

  /** The `dplab` folders once no seat is left in them: nothing of ours stays in the portal's own cgroup. */
  #dropEmptyBases(): void {
    for (const base of this.host.dirs)
      try {
        rmdirSync(base);
      } catch {
        // another seat's cgroup still in it, or gone
      }
  }

  /**
   * At portal start: removes every seat cgroup no seat has any more (`keep(uid)` says which are a
   * seat's, this portal's or another live one's). Only empty ones go: a cgroup still holding a
   * process is left as it is.
   */
  sweep(keep: (uid: number) => boolean): number[] {
    const removed = new Set<number>();
    for (const base of this.host.dirs) {
      let names: string[];
      try {
        names = readdirSync(base);
      } catch {
        continue;
      }
      for (const name of names) {
        const uid = Number(SEAT_DIR.exec(name)?.[1]);
        if (!uid || keep(uid)) continue;
        try {
          rmdirSync(join(base, name));
          removed.add(uid);
        } catch {
          // busy (a process inside) or gone: left alone
        }
      }
    }
    this.#dropEmptyBases();
    return [...removed];
  }
}

function readPids(dir: string): number[] {
  try {
    return readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The `cgroup.procs` files the runner's seat user enters (DPLAB_SEAT_CGROUP), or none. */
export function seatCgroupProcs(env: NodeJS.ProcessEnv = process.env): string[] {
  const text = env[SEAT_CGROUP_VAR];
  if (!text) return [];
  const files = text.split(':');
  if (!files.every((f) => /^\/[A-Za-z0-9_./-]+\/cgroup\.procs$/.test(f) && !f.includes('/../')))
    throw new DplabError(`${SEAT_CGROUP_VAR} must name cgroup.procs files, got "${text.slice(0, 200)}".`);
  return files;
}

/**
 * The argv prefix, run as root, that puts itself into the seat's cgroup(s) and then runs the rest
 * of its argv, which drops to the seat's user: everything that user starts is born inside. When a
 * cgroup cannot be entered nothing runs (exit 126): a seat process outside its limits is refused.
 */
export function enterArgv(procs: readonly string[]): string[] {
  if (!procs.length) return [];
  const script = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 126; shift; done; shift; exec "$@"';
  return ['/bin/sh', '-c', script, 'dplab-seat-cgroup', ...procs, '--'];
}
