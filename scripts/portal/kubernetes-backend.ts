/**
 * The `kubernetes` seat backend: each seat is a pod in the portal's namespace (the runner plus a
 * privileged Docker-in-Docker sidecar in which kind runs), with its ClusterIP Service and the
 * Secret holding its runner's token. It touches only objects that carry its managed-by label,
 * and deletes only the exact object it checked (a uid precondition).
 */
import type { V1Pod, V1Secret } from '@kubernetes/client-node';
import { DplabError } from '../base/errors.ts';
import { isMode, type Mode } from '../wire/modes.ts';
import { tokensEqual, weakTokenReason } from '../server/security.ts';
import { SEAT_ID_PATTERN, type SeatBackend, type SeatEndpoint, type SeatSpec, type SeatStatus } from './seat-backend.ts';
import { kubernetesSeatConfigFromEnv } from './kubernetes-config.ts';
import { clientNodeSeatApi, KubeApiError, loadKubeConfig, type SeatKind, type SeatKubeApi, type SeatObject } from './seat-kube-api.ts';
import {
  isManaged,
  MANAGED_SELECTOR,
  ownedByPod,
  SEAT_LABEL,
  SEAT_RUNNER_PORT,
  seatHostName,
  seatObjectName,
  seatPod,
  seatSecret,
  seatService,
  TOKEN_KEY,
  WARM_ANNOTATION,
  type KubernetesSeatConfig,
} from './seat-objects.ts';
import { podVerdict } from './seat-pod-status.ts';
import { SeatClient, type SeatTransport } from './seat-client.ts';

export interface KubernetesSeatBackendOptions {
  config: KubernetesSeatConfig;
  api: SeatKubeApi;
  /** How the backend reaches a seat's runner (default: HTTP to the Service's DNS name). */
  transport?: SeatTransport;
  /** Lines for the portal's log: what a delete could not do, a warm-up the runner refused. */
  log?: (line: string) => void;
}

export class KubernetesSeatBackend implements SeatBackend {
  readonly kind = 'kubernetes' as const;
  private readonly config: KubernetesSeatConfig;
  private readonly api: SeatKubeApi;
  private readonly transport: SeatTransport | undefined;
  private readonly log: (line: string) => void;
  /** Seats whose warm clusters this process has asked for (once each). */
  private readonly warmed = new Set<string>();

  constructor(opts: KubernetesSeatBackendOptions) {
    this.config = opts.config;
    this.api = opts.api;
    this.transport = opts.transport;
    this.log = opts.log ?? (() => undefined);
  }

  endpointOf(id: string): SeatEndpoint {
    const host = seatHostName(id, this.config.namespace);
    return { url: `http://${host}:${SEAT_RUNNER_PORT}`, host: `${host}:${SEAT_RUNNER_PORT}` };
  }

  async create(spec: SeatSpec): Promise<SeatStatus> {
    if (!SEAT_ID_PATTERN.test(spec.id)) {
      throw new DplabError(`Seat id "${spec.id.slice(0, 40)}" is not a DNS label of 1–20 lower-case letters, digits and dashes.`, {
        status: 400,
      });
    }
    const weak = weakTokenReason(spec.runnerToken);
    if (weak) throw new DplabError(`The seat's runner token is unusable: ${weak}`, { status: 400 });
    const ns = this.config.namespace;
    const pod = await this.ensure('Pod', seatPod(spec, this.config), spec.id);
    const owner = ownedByPod({ name: pod.metadata!.name!, uid: pod.metadata!.uid! });
    await this.ensure('Secret', seatSecret(spec, this.config, owner), spec.id);
    await this.ensure('Service', seatService(spec, this.config, owner), spec.id);
    const verdict = podVerdict(pod);
    this.log(`seat ${spec.id}: pod ${pod.metadata!.name} in ${ns}`);
    return verdict.phase === 'pod-ready' ? this.status(spec.id) : { id: spec.id, ...verdict };
  }

  /** A seat pod outlives the portal: taken back as it runs, once its Secret holds the token the portal kept. */
  async resume(spec: SeatSpec): Promise<SeatStatus> {
    const token = SEAT_ID_PATTERN.test(spec.id) ? await this.tokenOf(spec.id) : null;
    if (token === null || !tokensEqual(token, spec.runnerToken))
      throw new DplabError(`Seat ${spec.id.slice(0, 40)}'s runner token is not the one the portal kept; it is left as it is.`, {
        status: 409,
      });
    return this.status(spec.id);
  }

  async status(id: string): Promise<SeatStatus> {
    if (!SEAT_ID_PATTERN.test(id)) return { id, phase: 'deleted' };
    const pod = (await this.api.read('Pod', this.config.namespace, seatObjectName(id))) as V1Pod | null;
    if (!pod || !isManaged(pod.metadata?.labels, id)) return { id, phase: 'deleted' };
    return this.statusOfPod(id, pod);
  }

  async list(): Promise<SeatStatus[]> {
    const pods = await this.api.listPods(this.config.namespace, MANAGED_SELECTOR);
    const mine = pods.flatMap((p) => {
      const id = p.metadata?.labels?.[SEAT_LABEL];
      return id && isManaged(p.metadata?.labels, id) && p.metadata?.name === seatObjectName(id) ? [{ id, pod: p }] : [];
    });
    return Promise.all(mine.map(({ id, pod }) => this.statusOfPod(id, pod)));
  }

  async delete(id: string, opts: { signal?: AbortSignal } = {}): Promise<void> {
    if (!SEAT_ID_PATTERN.test(id)) return;
    const ns = this.config.namespace;
    const name = seatObjectName(id);
    const pod = await this.managed('Pod', name, id);
    if (pod && podVerdict(pod as V1Pod).phase === 'pod-ready') {
      const token = await this.tokenOf(id);
      if (token) {
        const problems = await this.clientOf(id, token).deleteClustersBestEffort({ signal: opts.signal });
        if (problems.length) this.log(`seat ${id}: its clusters may outlive it (the pod goes anyway): ${problems.join('; ')}`);
      }
    }
    for (const kind of ['Pod', 'Service', 'Secret'] as const) {
      const obj = kind === 'Pod' ? pod : await this.managed(kind, name, id);
      if (obj?.metadata?.uid) await this.api.delete(kind, ns, name, obj.metadata.uid);
    }
    this.warmed.delete(id);
  }

  private async statusOfPod(id: string, pod: V1Pod): Promise<SeatStatus> {
    const verdict = podVerdict(pod);
    if (verdict.phase !== 'pod-ready') return { id, ...verdict };
    const endpoint = this.endpointOf(id);
    if (!(await this.clientOf(id).healthy())) {
      return { id, phase: 'pending', message: 'The seat pod is Ready, but its runner does not answer /api/health yet.' };
    }
    const warm = (pod.metadata?.annotations?.[WARM_ANNOTATION] ?? '').split(',').filter(isMode) as Mode[];
    if (warm.length && !this.warmed.has(id)) {
      const token = await this.tokenOf(id);
      try {
        if (!token) throw new Error("the seat's Secret has no token");
        const client = this.clientOf(id, token);
        for (const mode of warm) await client.clusterUp(mode);
        this.warmed.add(id);
      } catch (err) {
        return { id, phase: 'ready', endpoint, message: `Warming the clusters failed: ${(err as Error).message}` };
      }
    }
    return { id, phase: 'ready', endpoint, ...(warm.length ? { message: `Clusters warming: ${warm.join(', ')}.` } : {}) };
  }

  /** The seat's runner, at its Service's name; without a token it answers /api/health only. */
  private clientOf(id: string, token?: string): SeatClient {
    return new SeatClient(this.endpointOf(id), token, this.transport);
  }

  private async tokenOf(id: string): Promise<string | null> {
    const secret = (await this.managed('Secret', seatObjectName(id), id)) as V1Secret | null;
    const b64 = secret?.data?.[TOKEN_KEY];
    return b64 ? Buffer.from(b64, 'base64').toString('utf8') : (secret?.stringData?.[TOKEN_KEY] ?? null);
  }

  /** The object if it exists and this portal made it for this seat; null otherwise (never touched). */
  private async managed(kind: SeatKind, name: string, id: string): Promise<SeatObject | null> {
    const obj = await this.api.read(kind, this.config.namespace, name);
    if (obj && !isManaged(obj.metadata?.labels, id)) {
      this.log(`seat ${id}: ${kind} ${name} exists without the portal's labels; left alone`);
      return null;
    }
    return obj;
  }

  /** Create, or take the one already there if it is ours for this seat (create is idempotent). */
  private async ensure<T extends SeatObject>(kind: SeatKind, body: T, id: string): Promise<T> {
    const ns = this.config.namespace;
    const name = body.metadata!.name!;
    const refuse = () =>
      new DplabError(
        `${kind} ${name} in namespace ${ns} exists and was not made by the portal for seat ${id}; the portal will not touch it.`,
        {
          status: 409,
          fix: `Pick another seat id, or remove that ${kind} yourself if it is left over: kubectl -n ${ns} delete ${kind.toLowerCase()} ${name}`,
        },
      );
    const existing = await this.api.read(kind, ns, name);
    if (existing) {
      if (!isManaged(existing.metadata?.labels, id)) throw refuse();
      return existing as T;
    }
    try {
      return await this.api.create(kind, ns, body);
    } catch (err) {
      if (!(err instanceof KubeApiError) || err.code !== 409) throw err;
      const raced = await this.api.read(kind, ns, name);
      if (!raced || !isManaged(raced.metadata?.labels, id)) throw refuse();
      return raced as T;
    }
  }
}

/** The backend as the portal runs it in a cluster: settings from its environment, its ServiceAccount's credentials. */
export function kubernetesSeatBackendFromEnv(env: Record<string, string | undefined>, log?: (line: string) => void): KubernetesSeatBackend {
  return new KubernetesSeatBackend({ config: kubernetesSeatConfigFromEnv(env), api: clientNodeSeatApi(loadKubeConfig()), log });
}
