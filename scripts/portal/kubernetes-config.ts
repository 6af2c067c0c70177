/**
 * The Kubernetes seat backend's settings as the portal's Deployment gives them
 * (scripts/portal/manifests/deployment.yaml): environment variables, checked once at start so a
 * typo is a clear error before the first learner joins, not a pod that never starts.
 */
import { DplabError } from '../base/errors.ts';
import type { KubernetesSeatConfig } from './seat-objects.ts';
import { seatSizing } from './seat-sizing.ts';

const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const LABEL_PAIR = /^([a-z0-9A-Z._/-]{1,253})=([a-z0-9A-Z._-]{0,63})$/;

const SEAT_ENV = {
  namespace: 'DPLAB_SEAT_NAMESPACE',
  image: 'DPLAB_SEAT_IMAGE',
  /** The Docker-in-Docker sidecar's image (default: seat-objects.ts' DIND_IMAGE), for a mirror or an air-gapped registry. */
  dindImage: 'DPLAB_SEAT_DIND_IMAGE',
  clusters: 'DPLAB_SEAT_CLUSTERS',
  nodeSelector: 'DPLAB_SEAT_NODE_SELECTOR',
  pullSecrets: 'DPLAB_SEAT_PULL_SECRETS',
  /** Taint keys the seats tolerate (NoSchedule), for nodes kept for seats. */
  tolerate: 'DPLAB_SEAT_TOLERATE',
  /** A RuntimeClass for seat pods (a VM runtime such as Kata Containers gives each seat its own kernel). */
  runtimeClass: 'DPLAB_SEAT_RUNTIME_CLASS',
} as const;

const bad = (name: string, value: string, want: string) =>
  new DplabError(`${name}="${value.slice(0, 80)}" is not ${want}.`, {
    status: 400,
    fix: `Set ${name} in the portal's Deployment (scripts/portal/manifests/deployment.yaml).`,
  });

export function kubernetesSeatConfigFromEnv(env: Record<string, string | undefined>): KubernetesSeatConfig {
  const namespace = env[SEAT_ENV.namespace] ?? '';
  if (!DNS_LABEL.test(namespace)) throw bad(SEAT_ENV.namespace, namespace, 'a namespace name (the portal sets it from its own pod)');
  const runnerImage = (env[SEAT_ENV.image] ?? '').trim();
  if (!/^[^\s]+$/.test(runnerImage))
    throw bad(SEAT_ENV.image, runnerImage, 'an image reference (the runner image, scripts/portal/image/Dockerfile)');
  const dindImage = (env[SEAT_ENV.dindImage] ?? '').trim();
  if (dindImage && !/^[^\s]+$/.test(dindImage))
    throw bad(SEAT_ENV.dindImage, dindImage, 'an image reference (a Docker-in-Docker image whose command runs dockerd)');
  const clustersText = env[SEAT_ENV.clusters] ?? '1';
  const clusters = Number(clustersText);
  if (!Number.isInteger(clusters) || clusters < 1 || clusters > 4)
    throw bad(SEAT_ENV.clusters, clustersText, 'a whole number of kind clusters per seat, 1–4');
  const nodeSelector: Record<string, string> = {};
  for (const pair of (env[SEAT_ENV.nodeSelector] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const m = LABEL_PAIR.exec(pair);
    if (!m) throw bad(SEAT_ENV.nodeSelector, pair, 'a node label as key=value');
    nodeSelector[m[1]] = m[2];
  }
  const pullSecrets = (env[SEAT_ENV.pullSecrets] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  for (const s of pullSecrets) if (!DNS_LABEL.test(s)) throw bad(SEAT_ENV.pullSecrets, s, 'a Secret name');
  const tolerate = (env[SEAT_ENV.tolerate] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  for (const k of tolerate) if (!/^[a-z0-9A-Z._/-]{1,253}$/.test(k)) throw bad(SEAT_ENV.tolerate, k, 'a taint key');
  const runtimeClass = (env[SEAT_ENV.runtimeClass] ?? '').trim();
  if (runtimeClass && !/^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/.test(runtimeClass))
    throw bad(SEAT_ENV.runtimeClass, runtimeClass, 'a RuntimeClass name (kubectl get runtimeclass)');
  return {
    namespace,
    runnerImage,
    ...(runtimeClass ? { runtimeClassName: runtimeClass } : {}),
    ...(dindImage ? { dindImage } : {}),
    sizing: seatSizing(clusters),
    ...(Object.keys(nodeSelector).length ? { nodeSelector } : {}),
    ...(pullSecrets.length ? { imagePullSecrets: pullSecrets } : {}),
    ...(tolerate.length ? { tolerations: tolerate.map((key) => ({ key, operator: 'Exists', effect: 'NoSchedule' })) } : {}),
  };
}
