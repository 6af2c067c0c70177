/**
 * The Kubernetes objects of one seat, as pure data: its Pod (the runner plus a privileged
 * Docker-in-Docker sidecar in which kind runs), its ClusterIP Service and the Secret holding
 * the runner's token. The backend creates them; the tests validate them against the Kubernetes
 * schemas and the real API server's admission.
 */
import type { V1OwnerReference, V1Pod, V1Secret, V1Service, V1Toleration } from '@kubernetes/client-node';
import type { SeatSpec } from './seat-backend.ts';
import { seatSizing, type SeatSizing } from './seat-sizing.ts';

/** Docker's own dind image; kind's node containers run inside it. Pinned: a seat is rebuilt from it every class. */
export const DIND_IMAGE = 'docker:28.5.1-dind';
/** The port `dplab serve` listens on inside the seat pod, and the Service's port. */
export const SEAT_RUNNER_PORT = 4321;
/** dockerd listens only on this unix socket (no TCP: a pod IP is reachable from every pod in the cluster). */
const DIND_SOCKET_DIR = '/run/dind';
export const DOCKER_HOST = `unix://${DIND_SOCKET_DIR}/docker.sock`;
/** The runner image's user (node's image has uid/gid 1000); dockerd hands its socket to this group. */
export const RUNNER_UID = 1000;

const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
const MANAGED_BY = 'dplab-portal';
export const SEAT_LABEL = 'dplab.io/seat';
export const WARM_ANNOTATION = 'dplab.io/warm';
export const TOKEN_KEY = 'token';

export interface KubernetesSeatConfig {
  /** Every seat object lives here (the portal's own namespace; its Role grants nothing elsewhere). */
  namespace: string;
  /** The runner image (scripts/portal/image/Dockerfile), pinned by tag or digest. */
  runnerImage: string;
  dindImage?: string;
  /** Defaults to seatSizing(1). */
  sizing?: SeatSizing;
  /** Keep seats on nodes meant for them (their sidecar is privileged). */
  nodeSelector?: Record<string, string>;
  /**
   * The seat pod's RuntimeClass (DPLAB_SEAT_RUNTIME_CLASS). Under the default runtime a seat pod's
   * Docker sidecar is privileged on the node's kernel; a VM runtime (Kata Containers and the like)
   * gives each seat a kernel of its own, so that privilege stays inside the seat's VM.
   */
  runtimeClassName?: string;
  tolerations?: V1Toleration[];
  imagePullSecrets?: string[];
}

export const seatObjectName = (id: string) => `dplab-seat-${id}`;

/** The DNS name the portal reaches the seat by, and the one Host header the seat's runner accepts. */
export function seatHostName(id: string, namespace: string): string {
  return `${seatObjectName(id)}.${namespace}.svc`;
}

function seatLabels(id: string): Record<string, string> {
  return { [MANAGED_BY_LABEL]: MANAGED_BY, [SEAT_LABEL]: id, 'app.kubernetes.io/name': 'dplab-seat' };
}

/** Only objects this portal made: the label selector for list(). */
export const MANAGED_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY},${SEAT_LABEL}`;

export function isManaged(labels: Record<string, string> | undefined, id?: string): boolean {
  if (labels?.[MANAGED_BY_LABEL] !== MANAGED_BY || !labels[SEAT_LABEL]) return false;
  return id === undefined || labels[SEAT_LABEL] === id;
}

export function seatPod(spec: SeatSpec, config: KubernetesSeatConfig): V1Pod {
  const name = seatObjectName(spec.id);
  const host = seatHostName(spec.id, config.namespace);
  const sizing = config.sizing ?? seatSizing(1);
  const hostHeader = `${host}:${SEAT_RUNNER_PORT}`;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: config.namespace,
      labels: seatLabels(spec.id),
      annotations: { [WARM_ANNOTATION]: spec.warm.join(',') },
    },
    spec: {
      // The seat never talks to this cluster's API: no service account token in the pod.
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      // The node's resolvers, not this cluster's DNS: the seat needs no Service name here, and
      // its own kind clusters use the same default Service range (10.96.0.0/16), so this
      // cluster's DNS address (10.96.0.10) is also their kube-dns. Docker's embedded DNS asks
      // the upstream from inside a node, where kube-proxy sends it to the nested CoreDNS:
      // measured on a real cluster, CoreDNS found the loop and crash-looped, and Start never finished.
      dnsPolicy: 'Default',
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      ...(config.nodeSelector ? { nodeSelector: config.nodeSelector } : {}),
      ...(config.runtimeClassName ? { runtimeClassName: config.runtimeClassName } : {}),
      ...(config.tolerations ? { tolerations: config.tolerations } : {}),
      ...(config.imagePullSecrets ? { imagePullSecrets: config.imagePullSecrets.map((n) => ({ name: n })) } : {}),
      containers: [
        {
          name: 'runner',
          image: config.runnerImage,
          // Listen on the pod's address; answer only to the Service's names (the Host check).
          args: [
            'serve',
            '--host',
            '0.0.0.0',
            '--port',
            String(SEAT_RUNNER_PORT),
            '--allow-host',
            host,
            '--allow-host',
            `${host}.cluster.local`,
            '--allow-host',
            name,
          ],
          env: [
            { name: 'DPLAB_TOKEN', valueFrom: { secretKeyRef: { name, key: TOKEN_KEY } } },
            { name: 'DOCKER_HOST', value: DOCKER_HOST },
            { name: 'DPLAB_STATE_DIR', value: '/var/lib/dplab' },
          ],
          ports: [{ name: 'http', containerPort: SEAT_RUNNER_PORT, protocol: 'TCP' }],
          // The probe names the Service as Host, or the runner's DNS-rebinding check refuses it.
          readinessProbe: {
            httpGet: { path: '/api/health', port: 'http', httpHeaders: [{ name: 'Host', value: hostHeader }] },
            periodSeconds: 5,
            failureThreshold: 3,
          },
          resources: sizing.runner,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: RUNNER_UID,
            runAsGroup: RUNNER_UID,
            allowPrivilegeEscalation: false,
            capabilities: { drop: ['ALL'] },
          },
          volumeMounts: [
            { name: 'dind-socket', mountPath: DIND_SOCKET_DIR },
            { name: 'runner-state', mountPath: '/var/lib/dplab' },
          ],
        },
        {
          name: 'dind',
          image: config.dindImage ?? DIND_IMAGE,
          // "dockerd" first: the image's entrypoint then adds no TCP listener of its own.
          args: ['dockerd', `--host=${DOCKER_HOST}`, `--group=${RUNNER_UID}`],
          env: [{ name: 'DOCKER_TLS_CERTDIR', value: '' }],
          // kind's nodes are privileged containers with their own cgroups and iptables.
          securityContext: { privileged: true },
          resources: sizing.dind,
          startupProbe: {
            exec: { command: ['docker', `--host=${DOCKER_HOST}`, 'info'] },
            periodSeconds: 2,
            failureThreshold: 60,
          },
          volumeMounts: [
            { name: 'dind-socket', mountPath: DIND_SOCKET_DIR },
            { name: 'docker-storage', mountPath: '/var/lib/docker' },
            { name: 'dev-shm', mountPath: '/dev/shm' },
            // kind in a pod (kubernetes-sigs/kind#303): the host's modules, read-only, for
            // kube-proxy's ipvs and nftables, and the host's cgroup tree for the nodes' kubelets.
            { name: 'modules', mountPath: '/lib/modules', readOnly: true },
            { name: 'cgroup', mountPath: '/sys/fs/cgroup' },
          ],
        },
      ],
      volumes: [
        { name: 'dind-socket', emptyDir: {} },
        { name: 'runner-state', emptyDir: {} },
        { name: 'docker-storage', emptyDir: { sizeLimit: sizing.dockerStorage } },
        { name: 'dev-shm', emptyDir: { medium: 'Memory', sizeLimit: sizing.shm } },
        { name: 'modules', hostPath: { path: '/lib/modules', type: 'Directory' } },
        { name: 'cgroup', hostPath: { path: '/sys/fs/cgroup', type: 'Directory' } },
      ],
    },
  };
}

/** Service and Secret belong to the Pod: deleting the Pod lets the garbage collector take them too. */
export function ownedByPod(pod: { name: string; uid: string }): V1OwnerReference {
  return { apiVersion: 'v1', kind: 'Pod', name: pod.name, uid: pod.uid };
}

export function seatSecret(spec: SeatSpec, config: KubernetesSeatConfig, owner?: V1OwnerReference): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: seatObjectName(spec.id),
      namespace: config.namespace,
      labels: seatLabels(spec.id),
      ...(owner ? { ownerReferences: [owner] } : {}),
    },
    type: 'Opaque',
    immutable: true,
    stringData: { [TOKEN_KEY]: spec.runnerToken },
  };
}

export function seatService(spec: SeatSpec, config: KubernetesSeatConfig, owner?: V1OwnerReference): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: seatObjectName(spec.id),
      namespace: config.namespace,
      labels: seatLabels(spec.id),
      ...(owner ? { ownerReferences: [owner] } : {}),
    },
    spec: {
      type: 'ClusterIP',
      selector: { [MANAGED_BY_LABEL]: MANAGED_BY, [SEAT_LABEL]: spec.id },
      ports: [{ name: 'http', port: SEAT_RUNNER_PORT, targetPort: 'http', protocol: 'TCP' }],
    },
  };
}
