/**
 * The Kubernetes backend's one seam to the API server: create, read, delete and list the three
 * kinds of object a seat has, in one namespace. `clientNodeSeatApi` is the real one
 * (@kubernetes/client-node, every write with fieldValidation=Strict so the server rejects a
 * field it does not know instead of dropping it); the unit tests pass a recorder.
 */
import { ApiException, CoreV1Api, KubeConfig, type V1Pod, type V1Secret, type V1Service } from '@kubernetes/client-node';
import { DplabError } from '../base/errors.ts';

export type SeatKind = 'Pod' | 'Service' | 'Secret';
export type SeatObject = V1Pod | V1Service | V1Secret;

export interface SeatKubeApi {
  /** Throws KubeApiError (409 when the name is taken). */
  create<T extends SeatObject>(kind: SeatKind, namespace: string, body: T): Promise<T>;
  /** null when there is no such object. */
  read(kind: SeatKind, namespace: string, name: string): Promise<SeatObject | null>;
  /** Deletes only the object with this uid (a precondition); false when it was already gone. */
  delete(kind: SeatKind, namespace: string, name: string, uid: string): Promise<boolean>;
  listPods(namespace: string, labelSelector: string): Promise<V1Pod[]>;
}

/** An API server's refusal, with its HTTP status and the Status message it sent. */
export class KubeApiError extends DplabError {
  constructor(
    readonly code: number,
    message: string,
    details?: string,
  ) {
    super(message, { status: code === 409 ? 409 : 502, details });
    this.name = 'KubeApiError';
  }
}

function statusMessage(body: unknown): string {
  if (typeof body === 'string') {
    try {
      return (JSON.parse(body) as { message?: string }).message ?? body;
    } catch {
      return body;
    }
  }
  return (body as { message?: string } | undefined)?.message ?? '';
}

function wrap(err: unknown, what: string): never {
  if (err instanceof ApiException) {
    const msg = statusMessage(err.body);
    throw new KubeApiError(err.code, `The Kubernetes API refused to ${what}: HTTP ${err.code}${msg ? `: ${msg}` : ''}`, msg);
  }
  throw new KubeApiError(0, `Cannot reach the Kubernetes API to ${what}: ${(err as Error).message}`);
}

const notFound = (err: unknown) => err instanceof ApiException && err.code === 404;

export interface ClientNodeOptions {
  /** 'All' for a server-side dry run: admission and validation, nothing stored. */
  dryRun?: 'All';
}

/** The portal's kubeconfig: in-cluster (its ServiceAccount) when it runs in a pod, else the given file or the default. */
export function loadKubeConfig(file?: string): KubeConfig {
  const kc = new KubeConfig();
  if (file) kc.loadFromFile(file);
  else kc.loadFromDefault();
  return kc;
}

export function clientNodeSeatApi(kc: KubeConfig, opts: ClientNodeOptions = {}): SeatKubeApi {
  const core = kc.makeApiClient(CoreV1Api);
  const write = { dryRun: opts.dryRun, fieldValidation: 'Strict', fieldManager: 'dplab-portal' };
  return {
    async create(kind, namespace, body) {
      const what = `create ${kind} ${body.metadata?.name ?? ''} in ${namespace}`;
      try {
        if (kind === 'Pod') return (await core.createNamespacedPod({ namespace, body: body as V1Pod, ...write })) as typeof body;
        if (kind === 'Service')
          return (await core.createNamespacedService({ namespace, body: body as V1Service, ...write })) as typeof body;
        return (await core.createNamespacedSecret({ namespace, body: body as V1Secret, ...write })) as typeof body;
      } catch (err) {
        return wrap(err, what);
      }
    },
    async read(kind, namespace, name) {
      try {
        if (kind === 'Pod') return await core.readNamespacedPod({ name, namespace });
        if (kind === 'Service') return await core.readNamespacedService({ name, namespace });
        return await core.readNamespacedSecret({ name, namespace });
      } catch (err) {
        if (notFound(err)) return null;
        return wrap(err, `read ${kind} ${name} in ${namespace}`);
      }
    },
    async delete(kind, namespace, name, uid) {
      const req = { name, namespace, dryRun: opts.dryRun, body: { preconditions: { uid } } };
      try {
        if (kind === 'Pod') await core.deleteNamespacedPod(req);
        else if (kind === 'Service') await core.deleteNamespacedService(req);
        else await core.deleteNamespacedSecret(req);
        return true;
      } catch (err) {
        if (notFound(err)) return false;
        return wrap(err, `delete ${kind} ${name} in ${namespace}`);
      }
    },
    async listPods(namespace, labelSelector) {
      try {
        return (await core.listNamespacedPod({ namespace, labelSelector })).items;
      } catch (err) {
        return wrap(err, `list the seat pods in ${namespace}`);
      }
    },
  };
}
