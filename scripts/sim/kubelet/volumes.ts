/**
 * The pod volumes the stand-in gives a container, as bind mounts (pod-process.ts makes them):
 * - configMap: its keys (or its `items`) written to `<stateDir>/volumes/<pod uid>/<volume>/` and
 *   mounted read-only, as the kubelet does; read with the node's credentials, which the Node
 *   authorizer allows for a ConfigMap a pod on this node names;
 * - hostPath: the host's path itself (a pod sees the host's filesystem, so a mount at the same
 *   path needs no mount at all).
 * Other kinds (the service account token, emptyDir, Secrets) are not made, and a container's
 * mount of one is left out, as before volumes existed here.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, normalize } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError, type ApiClient } from './api-client.ts';
import type { ContainerSpec } from './container-spec.ts';
import type { BindMount } from './pod-process.ts';

export interface Volume {
  name: string;
  configMap?: { name: string; items?: Array<{ key: string; path: string }>; optional?: boolean };
  hostPath?: { path: string; type?: string };
}

const FORBIDDEN_RETRIES = 60;
const RETRY_MS = 500;

/** A volume the pod needs and cannot have; the pod worker reports it as the kubelet's FailedMount. */
export class VolumeError extends Error {}

const volumesDir = (stateDir: string, uid: string) => join(stateDir, 'volumes', uid);

/** A relative path inside the volume folder, or null for one that would leave it. */
function inside(path: string): string | null {
  const p = normalize(path);
  return p.startsWith('/') || p === '..' || p.startsWith('../') ? null : p;
}

/** Makes the pod's volumes; returns each usable volume's folder (or host path) by name. */
export async function prepareVolumes(
  api: Pick<ApiClient, 'get'>,
  namespace: string,
  uid: string,
  volumes: readonly Volume[],
  stateDir: string,
): Promise<Map<string, string>> {
  const sources = new Map<string, string>();
  for (const v of volumes) {
    if (v.hostPath) sources.set(v.name, v.hostPath.path);
    if (!v.configMap) continue;
    let data: Record<string, string> | undefined;
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps/${encodeURIComponent(v.configMap.name)}`;
    for (let attempt = 1; data === undefined; attempt++) {
      try {
        data = (await api.get<{ data?: Record<string, string> }>(path)).data ?? {};
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        if (err.code === 404 && v.configMap.optional) data = {};
        else if (err.code === 404)
          throw new VolumeError(`MountVolume.SetUp failed for volume "${v.name}" : configmap "${v.configMap.name}" not found`);
        // The Node authorizer learns that this node's pod names the ConfigMap from its own watch of
        // pods, a moment after the pod reached us: until then it answers 403. The kubelet retries.
        else if (err.code === 403 && attempt < FORBIDDEN_RETRIES) await sleep(RETRY_MS);
        else throw new VolumeError(`MountVolume.SetUp failed for volume "${v.name}" : ${err.message}`);
      }
    }
    const dir = join(volumesDir(stateDir, uid), v.name);
    await mkdir(dir, { recursive: true });
    const files = v.configMap.items ?? Object.keys(data).map((key) => ({ key, path: key }));
    for (const f of files) {
      const rel = inside(f.path);
      if (rel === null || !(f.key in data)) continue;
      await mkdir(dirname(join(dir, rel)), { recursive: true });
      await writeFile(join(dir, rel), data[f.key]);
    }
    sources.set(v.name, dir);
  }
  return sources;
}

/** The container's mounts of volumes that exist here; a mount over its own source is none. */
export function containerMounts(
  container: ContainerSpec,
  sources: ReadonlyMap<string, string>,
  configMaps: ReadonlySet<string>,
): BindMount[] {
  const mounts: BindMount[] = [];
  for (const m of container.volumeMounts ?? []) {
    const base = sources.get(m.name);
    if (base === undefined) continue;
    const sub = m.subPath ? inside(m.subPath) : '';
    if (sub === null) continue;
    const source = sub ? join(base, sub) : base;
    if (normalize(source) === normalize(m.mountPath)) continue;
    mounts.push({ source, target: m.mountPath, readOnly: !!m.readOnly || configMaps.has(m.name) });
  }
  return mounts;
}

export async function removeVolumes(stateDir: string, uid: string): Promise<void> {
  await rm(volumesDir(stateDir, uid), { recursive: true, force: true });
}
