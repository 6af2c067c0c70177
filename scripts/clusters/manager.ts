/**
 * The cluster manager: `ensure(mode)` (idempotent, one shared run per mode), `delete`,
 * `status`/`statusAll`, and the event stream the server relays. Provisioning itself is the
 * ordered action list in actions.ts; this file runs it, reports it, and cleans up after it.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { CommandError } from '../base/exec.ts';
import { DplabError, errorToJson } from '../base/errors.ts';
import { dockerBlocker, type PreflightSystem } from '../preflight/index.ts';
import { actionFailure, type Action, type ProvisionContext } from './actions.ts';
import { Emitter, type ClusterEvent } from './events.ts';
import { nodeHealth } from './kube.ts';
import { clusterName, dataplaneName, kubeconfigPath, modeRecord, MODES, type Mode } from '../catalogue/modes.ts';
import { ActionStatus, newProgress } from './progress.ts';
import type { ClusterStatus, ErrorJson, Progress } from './status-types.ts';
import { resolveTimeouts, type ProvisionTimeouts } from './timeouts.ts';
import type { ClusterProvider } from './provider.ts';
import type { ProviderId } from '../catalogue/provider-ids.ts';
import { clusterProviders, type ClusterProviders } from './providers.ts';

export type { ClusterEvent } from './events.ts';
export type { ClusterStatus, ErrorJson, Progress } from './status-types.ts';

export interface ManagerOptions {
  timeouts?: Partial<ProvisionTimeouts>;
  images?: readonly string[];
  /** The images to preload into a mode's nodes (the runner passes the labs' own list). */
  imagesFor?: (mode: Mode) => readonly string[];
  /** Host facts for the preflight (tests play other machines). */
  system?: PreflightSystem;
  /** Which provider each mode's cluster has, and its handle (default: this process's, chosen once). */
  providers?: ClusterProviders;
}

export interface EnsureOptions extends ManagerOptions {
  /** Keep a half-made cluster after a failure (for debugging). */
  retain?: boolean;
  /** Stops waiting; the shared run is cancelled (and cleaned up) when its last waiter stops. */
  signal?: AbortSignal;
  /** This caller's view of the run's events (for the CLI's progress lines). */
  onEvent?: (event: ClusterEvent) => void;
  /** Started ahead for a later lab (warm-decision.ts said yes): its status says so until it is deleted. */
  ahead?: boolean;
}

interface Run {
  runId: string;
  controller: AbortController;
  progress: Progress;
  promise: Promise<ClusterStatus>;
  waiters: number;
  provider: ClusterProvider;
  actions: readonly Action[];
}

function baseStatus(mode: Mode, state: ClusterStatus['state']): ClusterStatus {
  return {
    mode,
    name: clusterName(mode),
    state,
    nodes: 0,
    readyNodes: 0,
    proxyMode: dataplaneName(modeRecord(mode)),
    kubeconfig: kubeconfigPath(mode),
  };
}

function cancelled(mode: Mode, retained: boolean): DplabError {
  return new DplabError(`Starting the ${mode} cluster was cancelled.`, {
    fix: retained
      ? `The half-made cluster was kept (--retain); remove it with \`dplab down ${mode}\`.`
      : `Nothing was left behind; start it again with \`dplab up ${mode}\`.`,
    status: 409,
  });
}

export class ClusterManager {
  readonly events = new Emitter<ClusterEvent>();
  readonly #runs = new Map<Mode, Run>();
  readonly #lastError = new Map<Mode, ErrorJson>();
  readonly #lastProgress = new Map<Mode, Progress>();
  /** Clusters started ahead (`ensure(mode, { ahead: true })`), until deleted or their start fails. */
  readonly #ahead = new Set<Mode>();

  readonly #providers: ClusterProviders;

  constructor(private readonly defaults: ManagerOptions = {}) {
    this.#providers = defaults.providers ?? clusterProviders();
  }

  #provider(mode: Mode): ClusterProvider {
    return this.#providers.provider(mode);
  }

  /** Make sure `dplab-<mode>` exists and is healthy; concurrent callers share one run. */
  ensure(mode: Mode, opts: EnsureOptions = {}): Promise<ClusterStatus> {
    let run = this.#runs.get(mode);
    if (!run) {
      if (opts.ahead) this.#ahead.add(mode);
      run = this.#start(mode, opts);
    }
    return this.#attach(mode, run, opts);
  }

  /** Delete the cluster (cancelling a run in progress first). Deleting an absent cluster is fine. */
  async delete(mode: Mode, opts: { signal?: AbortSignal; timeouts?: Partial<ProvisionTimeouts> } = {}): Promise<ClusterStatus> {
    const timeouts = resolveTimeouts({ ...this.defaults.timeouts, ...opts.timeouts });
    const run = this.#runs.get(mode);
    if (run) {
      run.controller.abort(cancelled(mode, false));
      await run.promise.catch(() => undefined);
    }
    await this.#provider(mode).delete(mode, { timeoutMs: timeouts.delete, signal: opts.signal });
    this.#providers.deleted(mode);
    rmSync(kubeconfigPath(mode), { force: true });
    this.#lastError.delete(mode);
    this.#lastProgress.delete(mode);
    this.#ahead.delete(mode);
    const status = baseStatus(mode, 'absent');
    this.#emit({ type: 'status', mode, status });
    return status;
  }

  /** Cheap: one list of the provider's clusters (`kind get clusters`), then the nodes of this cluster if it exists. */
  async status(mode: Mode, opts: { signal?: AbortSignal } = {}): Promise<ClusterStatus> {
    return (await this.#statuses([mode], opts.signal))[0];
  }

  async statusAll(opts: { signal?: AbortSignal } = {}): Promise<ClusterStatus[]> {
    return this.#statuses(MODES, opts.signal);
  }

  /** True while a provisioning run for `mode` is in progress. */
  isProvisioning(mode: Mode): boolean {
    return this.#runs.has(mode);
  }

  #emit(event: ClusterEvent): void {
    this.events.emit(event.type === 'status' ? { ...event, status: this.#marked(event.status) } : event);
  }

  /** A cluster started ahead says so while it starts and once ready (every panel shows it). */
  #marked(status: ClusterStatus): ClusterStatus {
    if (!this.#ahead.has(status.mode)) return status;
    if (status.state === 'absent') this.#ahead.delete(status.mode);
    return status.state === 'provisioning' || status.state === 'ready' ? { ...status, startedAhead: true } : status;
  }

  #attach(mode: Mode, run: Run, opts: EnsureOptions): Promise<ClusterStatus> {
    run.waiters++;
    const off = opts.onEvent ? this.events.on((e) => e.mode === mode && opts.onEvent!(e)) : undefined;
    return new Promise<ClusterStatus>((resolve, reject) => {
      let settled = false;
      const finish = (fn: () => void) => {
        if (settled) return;
        settled = true;
        run.waiters--;
        off?.();
        opts.signal?.removeEventListener('abort', onAbort);
        fn();
      };
      const onAbort = () => {
        // This caller stops waiting; the run stops only when nobody waits for it any more,
        // and then we wait for its clean-up so "cancelled" really means "nothing left".
        if (run.waiters === 1) {
          run.controller.abort(cancelled(mode, !!opts.retain));
          run.promise.then(
            (s) => finish(() => resolve(s)),
            (e) => finish(() => reject(e)),
          );
        } else finish(() => reject(cancelled(mode, false)));
      };
      if (opts.signal?.aborted) return onAbort();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      run.promise.then(
        (s) => finish(() => resolve(s)),
        (e) => finish(() => reject(e)),
      );
    });
  }

  #start(mode: Mode, opts: EnsureOptions): Run {
    const runId = randomUUID().slice(0, 8);
    const provider = this.#provider(mode);
    const actions = provider.actions(mode);
    const run: Run = {
      runId,
      controller: new AbortController(),
      progress: newProgress(runId, [...actions]),
      promise: Promise.resolve(baseStatus(mode, 'absent')),
      waiters: 0,
      provider,
      actions,
    };
    this.#runs.set(mode, run);
    this.#lastProgress.set(mode, run.progress);
    this.#lastError.delete(mode);
    run.promise = this.#provision(mode, run, opts).finally(() => {
      run.progress.endedAt = Date.now();
      this.#runs.delete(mode);
    });
    // Waiters see failures; the run's own promise must not count as unhandled.
    run.promise.catch(() => undefined);
    return run;
  }

  async #provision(mode: Mode, run: Run, opts: EnsureOptions): Promise<ClusterStatus> {
    const timeouts = resolveTimeouts({ ...this.defaults.timeouts, ...opts.timeouts });
    const signal = run.controller.signal;
    const retain = !!opts.retain;
    const ctx: ProvisionContext = {
      mode,
      name: clusterName(mode),
      kubeconfig: kubeconfigPath(mode),
      cluster: this.#providers.handle(mode),
      signal,
      timeouts,
      retain,
      images: opts.images ?? this.defaults.images ?? this.defaults.imagesFor?.(mode) ?? [],
      system: opts.system ?? this.defaults.system,
      note: (message) => {
        run.progress.notes.push(message);
        this.#emit({ type: 'info', mode, runId: run.runId, message, at: Date.now() });
      },
    };
    this.#emit({ type: 'status', mode, status: { ...baseStatus(mode, 'provisioning'), progress: run.progress } });

    try {
      const existing = await this.#probeExisting(mode, run.provider, timeouts, signal);
      if (existing === 'healthy') {
        ctx.note(`Reusing the running cluster ${ctx.name}.`);
        for (const a of run.progress.actions) a.state = 'skipped';
        const status = await this.#readyStatus(mode, timeouts);
        this.#emit({ type: 'status', mode, status });
        return status;
      }
      if (existing === 'unhealthy') {
        ctx.note(`Deleting ${ctx.name} left broken by an earlier run.`);
        await run.provider.delete(mode, { timeoutMs: timeouts.delete, signal });
      }
    } catch (err) {
      const error = signal.aborted ? cancelled(mode, retain) : err instanceof DplabError ? err : new DplabError(String(err));
      throw await this.#fail(mode, error, { created: false, retain, timeouts, provider: run.provider });
    }

    let created = false;
    try {
      for (const [i, action] of run.actions.entries()) {
        const st = new ActionStatus(run.progress.actions[i], mode, run.runId, (e) => this.#emit(e));
        st.start();
        try {
          if (action.id === 'create') created = true;
          await action.run(ctx);
          st.end(true);
        } catch (err) {
          const error = signal.aborted
            ? signal.reason instanceof DplabError
              ? signal.reason
              : cancelled(mode, retain)
            : actionFailure(action, ctx, err);
          st.end(false, errorToJson(error));
          throw error;
        } finally {
          st.end(false);
        }
      }
    } catch (err) {
      const error = err instanceof DplabError ? err : new DplabError(String(err));
      throw await this.#fail(mode, error, { created, retain, timeouts, provider: run.provider });
    }
    const status = await this.#readyStatus(mode, timeouts);
    this.#emit({ type: 'status', mode, status });
    return status;
  }

  /** After a failure: remove the half-made cluster (unless retained), record and report the error. */
  async #fail(
    mode: Mode,
    error: DplabError,
    o: { created: boolean; retain: boolean; timeouts: ProvisionTimeouts; provider: ClusterProvider },
  ): Promise<DplabError> {
    let final = error;
    if (o.created && !o.retain) {
      try {
        // No signal: clean-up must run even (especially) after a cancel.
        await o.provider.delete(mode, { timeoutMs: o.timeouts.delete, interrupted: { pollMs: o.timeouts.pollInterval } });
        rmSync(kubeconfigPath(mode), { force: true });
      } catch (cleanupErr) {
        final = new DplabError(error.message, {
          fix: `${error.fix ? `${error.fix} ` : ''}Clean-up failed too: remove the leftover cluster with \`${o.provider.manualCleanup(mode)}\`.`,
          details: [error.details, `Clean-up: ${cleanupErr instanceof Error ? cleanupErr.message : String(cleanupErr)}`]
            .filter(Boolean)
            .join('\n\n'),
          status: error.status,
        });
      }
    }
    this.#lastError.set(mode, errorToJson(final));
    const state = o.created && o.retain ? 'broken' : 'absent';
    this.#emit({
      type: 'status',
      mode,
      status: { ...baseStatus(mode, state), error: errorToJson(final), progress: this.#lastProgress.get(mode) },
    });
    return final;
  }

  /** Does `dplab-<mode>` already exist, and is it healthy? Errors mean "unknown": the preflight explains them. */
  async #probeExisting(
    mode: Mode,
    provider: ClusterProvider,
    timeouts: ProvisionTimeouts,
    signal: AbortSignal,
  ): Promise<'absent' | 'healthy' | 'unhealthy'> {
    try {
      const names = await provider.list({ timeoutMs: timeouts.quick, signal });
      if (!names.includes(clusterName(mode))) return 'absent';
      if (provider.isComplete && !provider.isComplete(mode)) return 'unhealthy';
      if (!existsSync(kubeconfigPath(mode))) await provider.exportKubeconfig(mode, { timeoutMs: timeouts.quick, signal });
      const h = await nodeHealth(this.#providers.handle(mode), { timeoutMs: timeouts.quick, signal });
      return h.total > 0 && h.notReady.length === 0 ? 'healthy' : 'unhealthy';
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (err instanceof CommandError && (err.kind === 'cluster-unreachable' || err.kind === 'cluster-missing')) return 'unhealthy';
      return 'absent';
    }
  }

  async #readyStatus(mode: Mode, timeouts: ProvisionTimeouts): Promise<ClusterStatus> {
    const h = await nodeHealth(this.#providers.handle(mode), { timeoutMs: timeouts.quick }).catch(() => undefined);
    return { ...baseStatus(mode, 'ready'), nodes: h?.total ?? 0, readyNodes: h?.ready ?? 0, progress: this.#lastProgress.get(mode) };
  }

  async #statuses(modes: readonly Mode[], signal?: AbortSignal): Promise<ClusterStatus[]> {
    const timeouts = resolveTimeouts(this.defaults.timeouts);
    // One list per provider in use (one `kind get clusters` for all kind modes).
    const lists = new Map<ProviderId, { names?: string[]; error?: ErrorJson; blocked?: boolean }>();
    const providers = new Map(modes.map((m) => [m, this.#provider(m)] as const));
    for (const p of new Set([...providers].filter(([m]) => !this.#runs.has(m)).map(([, p]) => p))) {
      try {
        lists.set(p.id, { names: await p.list({ timeoutMs: timeouts.quick, signal }) });
      } catch (err) {
        if (signal?.aborted) throw err;
        // Name Docker first when kind's list fails and Docker is (also) missing, as `dplab up` and `doctor` do.
        const docker = p.id === 'kind' ? await dockerBlocker(this.defaults.system, signal).catch(() => undefined) : undefined;
        // Docker, or kind itself, missing: no cluster of these modes can start here (the lab page offers its replay).
        const blocked = !!docker || (err instanceof CommandError && err.kind === 'tool-missing');
        lists.set(p.id, { error: docker ?? errorToJson(err), blocked });
      }
    }
    return Promise.all(
      modes.map((mode) => {
        const provider = providers.get(mode)!;
        const l = lists.get(provider.id);
        return this.#statusOf(mode, provider, l?.names, l?.error, timeouts, signal).then((st) =>
          l?.blocked && st.state === 'absent' ? { ...st, blocked: true } : this.#marked(st),
        );
      }),
    );
  }

  async #statusOf(
    mode: Mode,
    provider: ClusterProvider,
    names: string[] | undefined,
    listError: ErrorJson | undefined,
    timeouts: ProvisionTimeouts,
    signal?: AbortSignal,
  ): Promise<ClusterStatus> {
    const run = this.#runs.get(mode);
    if (run) return { ...baseStatus(mode, 'provisioning'), progress: run.progress };
    const last = { error: this.#lastError.get(mode), progress: this.#lastProgress.get(mode) };
    if (!names) return { ...baseStatus(mode, 'absent'), ...last, error: listError ?? last.error };
    if (!names.includes(clusterName(mode))) return { ...baseStatus(mode, 'absent'), ...last };
    if (provider.isComplete && !provider.isComplete(mode)) {
      return {
        ...baseStatus(mode, 'broken'),
        progress: last.progress,
        error: {
          message: `${clusterName(mode)} was left half-made by an interrupted start.`,
          fix: `Start it again (\`dplab up ${mode}\` removes the leftovers first) or remove it: \`${provider.manualCleanup(mode)}\`.`,
        },
      };
    }
    try {
      if (!existsSync(kubeconfigPath(mode))) await provider.exportKubeconfig(mode, { timeoutMs: timeouts.quick, signal });
      const h = await nodeHealth(this.#providers.handle(mode), { timeoutMs: timeouts.quick, signal });
      const healthy = h.total > 0 && h.notReady.length === 0;
      return {
        ...baseStatus(mode, healthy ? 'ready' : 'broken'),
        nodes: h.total,
        readyNodes: h.ready,
        progress: last.progress,
        error: healthy
          ? undefined
          : {
              message: `${h.ready} of ${h.total} nodes are Ready (not ready: ${h.notReady.join(', ') || 'none registered'}).`,
              fix: `Wait a minute, or recreate it: \`dplab down ${mode}\` then \`dplab up ${mode}\`.`,
            },
      };
    } catch (err) {
      if (signal?.aborted) throw err;
      return {
        ...baseStatus(mode, 'broken'),
        progress: last.progress,
        error: { ...errorToJson(err), fix: `Recreate it: \`dplab down ${mode}\` then \`dplab up ${mode}\`.` },
      };
    }
  }
}
