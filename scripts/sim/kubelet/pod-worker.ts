/**
 * One pod on this node, from binding to deletion: refuse what cannot run (with an event and a
 * Waiting status), make the sandbox, run each container as a process in it, probe, restart per
 * restartPolicy, report status, and on deletion stop the containers within the grace period,
 * remove the sandbox and delete the Pod object with grace 0 (as the kubelet's status manager does).
 * Operations on one pod run one at a time.
 */
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { ApiClient, ApiError } from './api-client.ts';
import type { KubeletConfig } from './config.ts';
import { containerArgv, containerEnv, namedPorts, serviceLinkEnv, type ContainerSpec, type Service } from './container-spec.ts';
import { postPodEvent } from './events.ts';
import { imageIdFor, resolveImage, type SimBinary } from './images.ts';
import {
  clusterFirstDns,
  createSandbox,
  removeSandbox,
  renderHosts,
  renderResolvConf,
  sandboxNames,
  type SandboxNames,
} from './pod-network.ts';
import { execInPod, signalGroup, startContainerProcess, type BindMount, type PodPlace } from './pod-process.ts';
import { podStatus, restartDelayMs, shouldRestart, type ContainerState, type ContainerView } from './pod-status.ts';
import { initialProbeState, probeTiming, recordProbe, runProbe, type Probe, type ProbeKind, type ProbeState } from './probes.ts';
import { removePodRecord, writePodRecord, type PodRecord, type StatePaths } from './state.ts';
import { containerMounts, prepareVolumes, removeVolumes, VolumeError, type Volume } from './volumes.ts';

export interface Pod {
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    resourceVersion?: string;
    deletionTimestamp?: string;
    deletionGracePeriodSeconds?: number;
    creationTimestamp?: string;
  };
  spec: {
    nodeName?: string;
    containers: Array<ContainerSpec & { readinessProbe?: Probe; livenessProbe?: Probe; startupProbe?: Probe }>;
    initContainers?: ContainerSpec[];
    restartPolicy?: string;
    terminationGracePeriodSeconds?: number;
    hostNetwork?: boolean;
    volumes?: Volume[];
    hostname?: string;
    subdomain?: string;
    dnsPolicy?: string;
    enableServiceLinks?: boolean;
    serviceAccountName?: string;
  };
  status?: { conditions?: Array<{ type: string; lastTransitionTime?: string }> };
}

export interface WorkerDeps {
  api: ApiClient;
  config: KubeletConfig;
  paths: StatePaths;
  podCidr: string;
  /** The version of each built binary, for the container status' imageID. */
  versions: Record<SimBinary, string>;
  allocate(): string;
  release(ip: string): void;
  log(msg: string): void;
}

interface Running {
  spec: Pod['spec']['containers'][number];
  child: ChildProcess | null;
  state: ContainerState;
  lastState: ContainerState | null;
  restartCount: number;
  ready: boolean;
  started: boolean;
  probes: Partial<Record<ProbeKind, ProbeState>>;
  timers: NodeJS.Timeout[];
  env: Record<string, string>;
  mounts: BindMount[];
  /** Set while the stand-in itself is stopping this container (liveness kill or deletion). */
  stopping: boolean;
}

/** How long after SIGKILL a process may take to be reaped before we stop waiting. */
const KILL_WAIT_MS = 5_000;
/** Status posts are coalesced to one per this interval. */
const STATUS_DEBOUNCE_MS = 100;

export class PodWorker {
  private pod: Pod;
  private names: SandboxNames;
  private podIP: string | null = null;
  private sandboxReady = false;
  private containers = new Map<string, Running>();
  private refused: Map<string, { reason: string; message: string }> | null = null;
  private startTime = new Date().toISOString();
  private readySince = this.startTime;
  private lastReady = false;
  private chain: Promise<void> = Promise.resolve();
  private statusTimer: NodeJS.Timeout | null = null;
  private terminating = false;
  private finished = false;
  /** Resolves when the worker has removed everything it made. */
  done: Promise<void>;
  private resolveDone!: () => void;

  constructor(
    pod: Pod,
    private readonly deps: WorkerDeps,
  ) {
    this.pod = pod;
    this.names = sandboxNames(deps.config.netns, pod.metadata.uid, deps.paths);
    this.done = new Promise((r) => (this.resolveDone = r));
    this.enqueue(() => this.start());
  }

  get key(): string {
    return `${this.pod.metadata.namespace}/${this.pod.metadata.name}`;
  }

  private enqueue(op: () => Promise<void>): void {
    this.chain = this.chain.then(op).catch((err: unknown) => this.deps.log(`${this.key}: ${(err as Error).message}`));
  }

  /** A newer version of the Pod from the watch. */
  update(pod: Pod): void {
    this.pod = pod;
    if (pod.metadata.deletionTimestamp && !this.terminating) {
      this.terminating = true;
      const grace = pod.metadata.deletionGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30;
      this.enqueue(() => this.terminate(grace, true));
    }
  }

  /** The Pod is gone from the API (force-deleted) or the stand-in is shutting down. */
  stop(graceSeconds: number, deleteObject: boolean): Promise<void> {
    if (!this.terminating) {
      this.terminating = true;
      this.enqueue(() => this.terminate(graceSeconds, deleteObject));
    }
    return this.done;
  }

  private event(type: 'Normal' | 'Warning', reason: string, message: string, container?: string): void {
    const fieldPath = container ? `spec.containers{${container}}` : undefined;
    postPodEvent(this.deps.api, this.deps.config.nodeName, this.pod, type, reason, message, fieldPath).catch((err: unknown) =>
      this.deps.log(`${this.key}: event ${reason} not posted: ${(err as Error).message}`),
    );
  }

  private async start(): Promise<void> {
    if (this.terminating) return;
    const { config } = this.deps;
    const spec = this.pod.spec;
    // What the stand-in cannot run is refused up front, each container with its reason.
    const refused = new Map<string, { reason: string; message: string }>();
    for (const c of spec.containers) {
      const r = resolveImage(c.image);
      if (!r.ok) refused.set(c.name, { reason: r.reason, message: r.message });
    }
    if (spec.initContainers?.length) {
      for (const c of spec.containers)
        refused.set(c.name, { reason: 'CreateContainerConfigError', message: 'the sim kubelet stand-in does not run init containers' });
    }
    if (refused.size) {
      this.refused = refused;
      for (const [name, r] of refused) this.event('Warning', r.reason, r.message, name);
      await this.postStatus();
      return;
    }

    // A hostNetwork pod has no sandbox: its containers run in the node's namespaces, with its address.
    if (this.host) {
      this.podIP = config.nodeIP;
      this.sandboxReady = true;
      await this.startContainers();
      return;
    }
    this.podIP = this.deps.allocate();
    const hostname = spec.hostname || this.pod.metadata.name;
    const fqdn = spec.subdomain ? `${hostname}.${spec.subdomain}.${this.pod.metadata.namespace}.svc.${config.clusterDomain}` : undefined;
    const dns = clusterFirstDns(this.pod.metadata.namespace, config.clusterDNS, config.clusterDomain);
    try {
      await createSandbox({
        names: this.names,
        podCidr: this.deps.podCidr,
        podIP: this.podIP,
        hostname,
        resolvConf: renderResolvConf(dns),
        hosts: renderHosts(this.podIP, hostname, fqdn),
      });
    } catch (err) {
      this.deps.release(this.podIP);
      this.podIP = null;
      this.event('Warning', 'FailedCreatePodSandBox', `Failed to create pod sandbox: ${(err as Error).message}`);
      throw err;
    }
    this.sandboxReady = true;
    await this.startContainers();
  }

  private get host(): boolean {
    return !!this.pod.spec.hostNetwork;
  }

  private place(c: Running): PodPlace {
    return { ns: this.host ? null : this.names, mounts: c.mounts };
  }

  private async startContainers(): Promise<void> {
    const { config } = this.deps;
    const spec = this.pod.spec;
    const podIP = this.podIP ?? config.nodeIP;
    let sources: Map<string, string>;
    try {
      sources = await prepareVolumes(
        this.deps.api,
        this.pod.metadata.namespace,
        this.pod.metadata.uid,
        spec.volumes ?? [],
        this.deps.paths.root,
      );
    } catch (err) {
      if (!(err instanceof VolumeError)) throw err;
      this.refused = new Map(spec.containers.map((c) => [c.name, { reason: 'ContainerCreating', message: err.message }]));
      this.event('Warning', 'FailedMount', err.message);
      await this.postStatus();
      return;
    }
    const configMaps = new Set((spec.volumes ?? []).filter((v) => v.configMap).map((v) => v.name));
    const serviceEnv = spec.enableServiceLinks === false ? {} : await this.serviceEnv();
    for (const c of spec.containers) {
      const env = containerEnv(
        c,
        {
          name: this.pod.metadata.name,
          namespace: this.pod.metadata.namespace,
          uid: this.pod.metadata.uid,
          nodeName: config.nodeName,
          podIP,
          hostIP: config.nodeIP,
          serviceAccountName: spec.serviceAccountName ?? 'default',
        },
        serviceEnv,
      );
      this.containers.set(c.name, {
        spec: c,
        child: null,
        state: { kind: 'waiting', reason: 'ContainerCreating' },
        lastState: null,
        restartCount: 0,
        ready: false,
        started: false,
        probes: {},
        timers: [],
        env,
        mounts: containerMounts(c, sources, configMaps),
        stopping: false,
      });
    }
    await this.saveRecord();
    for (const c of this.containers.values()) await this.runContainer(c);
  }

  private async serviceEnv(): Promise<Record<string, string>> {
    try {
      const [own, def] = await Promise.all([
        this.deps.api.get<{ items: Service[] }>(`/api/v1/namespaces/${encodeURIComponent(this.pod.metadata.namespace)}/services`),
        this.deps.api.get<Service>('/api/v1/namespaces/default/services/kubernetes').catch(() => null),
      ]);
      const env = serviceLinkEnv(own.items);
      if (def?.spec.clusterIP) {
        const https = def.spec.ports?.find((p) => p.name === 'https') ?? def.spec.ports?.[0];
        Object.assign(env, serviceLinkEnv([def]));
        if (https) Object.assign(env, { KUBERNETES_SERVICE_HOST: def.spec.clusterIP, KUBERNETES_SERVICE_PORT: String(https.port) });
      }
      return env;
    } catch (err) {
      this.deps.log(`${this.key}: service environment skipped: ${(err as Error).message}`);
      return {};
    }
  }

  private logFile(c: Running): string {
    const m = this.pod.metadata;
    return join(this.deps.paths.logs, `${m.namespace}_${m.name}_${m.uid}`, c.spec.name, `${c.restartCount}.log`);
  }

  private async saveRecord(): Promise<void> {
    if (!this.podIP) return;
    // A host pod's processes are found by the exec server in the node's namespaces, and by the clean-up by pid.
    const record: PodRecord = {
      namespace: this.pod.metadata.namespace,
      name: this.pod.metadata.name,
      uid: this.pod.metadata.uid,
      netns: this.host ? this.deps.config.netns : this.names.netns,
      utsFile: this.host ? '/proc/self/ns/uts' : this.names.utsFile,
      hostVeth: this.host ? '' : this.names.hostVeth,
      hostNetwork: this.host,
      ip: this.podIP,
      containers: [...this.containers.values()].map((c) => ({
        name: c.spec.name,
        pid: c.child?.pid ?? null,
        logFile: this.logFile(c),
        env: c.env,
        restartCount: c.restartCount,
      })),
    };
    await writePodRecord(this.deps.paths, record);
  }

  private async runContainer(c: Running): Promise<void> {
    if (this.terminating) return;
    const argv = containerArgv(c.spec, c.env, this.deps.config.binDir);
    const image = resolveImage(c.spec.image);
    if (c.restartCount === 0 && image.ok) {
      const version = this.deps.versions[image.binary];
      const other = image.requestedTag && image.requestedTag !== version ? `, not tag ${image.requestedTag}` : '';
      this.event(
        'Normal',
        'Pulled',
        `Container image "${c.spec.image}" already present on machine (sim: runs the built ${image.binary} ${version}${other})`,
        c.spec.name,
      );
    }
    let child: ChildProcess;
    try {
      child = await startContainerProcess(this.place(c), argv, c.env, this.logFile(c));
    } catch (err) {
      c.state = { kind: 'waiting', reason: 'CreateContainerError', message: (err as Error).message };
      this.event('Warning', 'Failed', `Error: ${(err as Error).message}`, c.spec.name);
      this.scheduleStatus();
      return;
    }
    c.child = child;
    c.stopping = false;
    const startedAt = new Date().toISOString();
    c.state = { kind: 'running', startedAt };
    c.ready = !c.spec.readinessProbe && !c.spec.startupProbe;
    c.started = !c.spec.startupProbe;
    this.event('Normal', 'Created', `Created container: ${c.spec.name}`, c.spec.name);
    this.event('Normal', 'Started', `Started container ${c.spec.name}`, c.spec.name);
    child.on('exit', (code, signal) => this.enqueue(() => this.onExit(c, child, startedAt, code, signal)));
    await this.saveRecord();
    this.startProbes(c);
    this.scheduleStatus();
  }

  private startProbes(c: Running): void {
    const kinds: ProbeKind[] = c.spec.startupProbe ? ['startup'] : ['readiness', 'liveness'];
    for (const kind of kinds) this.startProbe(c, kind);
  }

  private startProbe(c: Running, kind: ProbeKind): void {
    const probe = c.spec[`${kind}Probe`];
    if (!probe) return;
    const t = probeTiming(probe);
    const child = c.child;
    c.probes[kind] = initialProbeState(kind);
    const tick = async () => {
      if (this.terminating || c.child !== child || c.stopping) return;
      const outcome = await runProbe(probe, {
        podIP: this.podIP ?? '',
        namedPorts: namedPorts(c.spec),
        exec: (cmd, timeoutMs) =>
          execInPod(this.place(c), containerArgv({ ...c.spec, command: cmd, args: [] }, c.env, this.deps.config.binDir), c.env, timeoutMs),
      });
      if (this.terminating || c.child !== child || c.stopping) return;
      const before = c.probes[kind] ?? initialProbeState(kind);
      const after = recordProbe(before, outcome.passed, probe);
      c.probes[kind] = after;
      if (!outcome.passed)
        this.event(
          'Warning',
          'Unhealthy',
          `${kind[0].toUpperCase()}${kind.slice(1)} probe failed: ${outcome.message.replace(/^Probe failed: /, '')}`,
          c.spec.name,
        );
      if (kind === 'readiness' && c.ready !== after.ok) {
        c.ready = after.ok;
        this.scheduleStatus();
      }
      if (kind === 'startup' && after.ok && !c.started) {
        c.started = true;
        c.ready = !c.spec.readinessProbe;
        for (const timer of c.timers) clearInterval(timer);
        c.timers = [];
        this.startProbe(c, 'readiness');
        this.startProbe(c, 'liveness');
        this.scheduleStatus();
        return;
      }
      if ((kind === 'liveness' || kind === 'startup') && before.ok && !after.ok) {
        this.event('Normal', 'Killing', `Container ${c.spec.name} failed ${kind} probe, will be restarted`, c.spec.name);
        this.enqueue(() => this.killContainer(c, this.pod.spec.terminationGracePeriodSeconds ?? 30));
      }
    };
    const begin = setTimeout(() => {
      void tick();
      c.timers.push(setInterval(() => void tick(), t.periodMs));
    }, t.initialDelayMs);
    c.timers.push(begin);
  }

  private stopProbes(c: Running): void {
    for (const t of c.timers) {
      clearTimeout(t);
      clearInterval(t);
    }
    c.timers = [];
  }

  private async onExit(
    c: Running,
    child: ChildProcess,
    startedAt: string,
    code: number | null,
    signal: NodeJS.Signals | null,
  ): Promise<void> {
    if (c.child !== child) return;
    this.stopProbes(c);
    c.child = null;
    c.ready = false;
    const exitCode = code ?? 128 + (signal ? (({ SIGKILL: 9, SIGTERM: 15, SIGINT: 2 } as Record<string, number>)[signal] ?? 1) : 1);
    const terminated: ContainerState = {
      kind: 'terminated',
      exitCode,
      reason: exitCode === 0 ? 'Completed' : 'Error',
      startedAt,
      finishedAt: new Date().toISOString(),
    };
    if (this.terminating) {
      c.state = terminated;
      return;
    }
    if (!shouldRestart(this.pod.spec.restartPolicy, exitCode)) {
      c.state = terminated;
      this.finished = [...this.containers.values()].every((x) => x.state.kind === 'terminated');
      await this.saveRecord();
      this.scheduleStatus();
      return;
    }
    c.lastState = terminated;
    c.restartCount += 1;
    const delay = restartDelayMs(c.restartCount);
    c.state = {
      kind: 'waiting',
      reason: 'CrashLoopBackOff',
      message: `back-off ${Math.round(delay / 1000)}s restarting failed container=${c.spec.name} pod=${this.pod.metadata.name}_${this.pod.metadata.namespace}(${this.pod.metadata.uid})`,
    };
    if (!c.stopping) this.event('Warning', 'BackOff', 'Back-off restarting failed container', c.spec.name);
    this.scheduleStatus();
    const timer = setTimeout(() => this.enqueue(() => this.runContainer(c)), c.stopping ? 0 : delay);
    c.timers.push(timer);
  }

  /** SIGTERM the container's process group, SIGKILL after the grace period, wait for the exit. */
  private async killContainer(c: Running, graceSeconds: number): Promise<void> {
    const child = c.child;
    if (!child?.pid) return;
    c.stopping = true;
    const exited = new Promise<void>((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', () => r())));
    signalGroup(child.pid, 'SIGTERM');
    const killTimer = setTimeout(() => child.pid && signalGroup(child.pid, 'SIGKILL'), graceSeconds * 1000);
    await Promise.race([exited, new Promise((r) => setTimeout(r, graceSeconds * 1000 + KILL_WAIT_MS))]);
    clearTimeout(killTimer);
  }

  private async terminate(graceSeconds: number, deleteObject: boolean): Promise<void> {
    try {
      const running = [...this.containers.values()].filter((c) => c.child);
      for (const c of this.containers.values()) this.stopProbes(c);
      for (const c of running) this.event('Normal', 'Killing', `Stopping container ${c.spec.name}`, c.spec.name);
      // The chain is this worker's queue: exits arriving now are handled after terminate, so wait on the processes directly.
      await Promise.all(running.map((c) => this.killContainer(c, graceSeconds)));
      if (this.sandboxReady && !this.host) await removeSandbox(this.names);
      this.sandboxReady = false;
      await removeVolumes(this.deps.paths.root, this.pod.metadata.uid);
      await removePodRecord(this.deps.paths, this.pod.metadata.uid);
      if (this.podIP && !this.host) this.deps.release(this.podIP);
      if (deleteObject) {
        const m = this.pod.metadata;
        try {
          await this.deps.api.request(
            'DELETE',
            `/api/v1/namespaces/${encodeURIComponent(m.namespace)}/pods/${encodeURIComponent(m.name)}`,
            {
              apiVersion: 'v1',
              kind: 'DeleteOptions',
              gracePeriodSeconds: 0,
              preconditions: { uid: m.uid },
            },
          );
        } catch (err) {
          if (!(err instanceof ApiError && (err.code === 404 || err.code === 409))) throw err;
        }
      }
    } finally {
      if (this.statusTimer) clearTimeout(this.statusTimer);
      this.resolveDone();
    }
  }

  private scheduleStatus(): void {
    if (this.statusTimer || this.terminating) return;
    this.statusTimer = setTimeout(() => {
      this.statusTimer = null;
      this.enqueue(() => this.postStatus());
    }, STATUS_DEBOUNCE_MS);
  }

  private views(): ContainerView[] {
    const imageId = (image: string) => {
      const r = resolveImage(image);
      return r.ok ? imageIdFor(image, r.binary, this.deps.versions[r.binary]) : '';
    };
    return this.pod.spec.containers.map((spec) => {
      const refused = this.refused?.get(spec.name);
      const c = this.containers.get(spec.name);
      const state: ContainerState = refused
        ? { kind: 'waiting', reason: refused.reason, message: refused.message }
        : (c?.state ?? { kind: 'waiting', reason: 'ContainerCreating' });
      return {
        name: spec.name,
        image: spec.image,
        imageID: refused ? '' : imageId(spec.image),
        containerID: c?.child?.pid ? `dplab-sim://${this.pod.metadata.uid}/${spec.name}/${c.restartCount}` : '',
        state,
        lastState: c?.lastState ?? null,
        restartCount: c?.restartCount ?? 0,
        ready: c?.ready ?? false,
        started: c ? c.started && c.state.kind === 'running' : false,
      };
    });
  }

  private async postStatus(): Promise<void> {
    if (this.terminating) return;
    const containers = this.views();
    const ready = containers.length > 0 && containers.every((c) => c.ready);
    if (ready !== this.lastReady) {
      this.lastReady = ready;
      this.readySince = new Date().toISOString();
    }
    const scheduledAt =
      this.pod.status?.conditions?.find((c) => c.type === 'PodScheduled')?.lastTransitionTime ??
      this.pod.metadata.creationTimestamp ??
      this.startTime;
    const status = podStatus({
      hostIP: this.deps.config.nodeIP,
      podIP: this.podIP,
      startTime: this.startTime,
      sandboxReady: this.sandboxReady,
      finished: this.finished,
      containers,
      readySince: this.readySince,
      scheduledAt,
    });
    const m = this.pod.metadata;
    try {
      await this.deps.api.mergePatch(`/api/v1/namespaces/${encodeURIComponent(m.namespace)}/pods/${encodeURIComponent(m.name)}/status`, {
        metadata: { uid: m.uid },
        status,
      });
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return;
      throw err;
    }
  }
}
