/**
 * The Node object the stand-in registers and the status it reports, shaped like a kind node's
 * (labels, addresses, capacity, conditions, nodeInfo). Pure: time and machine facts come in.
 */
import type { KubeletConfig } from './config.ts';

const KUBELET_VERSION = 'v1.35.0';
export const KUBELET_PORT = 10250;

export interface MachineFacts {
  cpus: number;
  memoryKi: number;
  kernelVersion: string;
  osImage: string;
  architecture: string;
  machineID: string;
  bootID: string;
}

function nodeLabels(config: KubeletConfig, architecture: string): Record<string, string> {
  return {
    'beta.kubernetes.io/arch': architecture,
    'beta.kubernetes.io/os': 'linux',
    'kubernetes.io/arch': architecture,
    'kubernetes.io/hostname': config.nodeName,
    'kubernetes.io/os': 'linux',
    ...config.labels,
  };
}

const condition = (type: string, status: 'True' | 'False', reason: string, message: string, now: string, since: string) => ({
  type,
  status,
  reason,
  message,
  lastHeartbeatTime: now,
  lastTransitionTime: since,
});

export function nodeStatus(config: KubeletConfig, facts: MachineFacts, now: string, since: string) {
  const capacity = {
    cpu: String(facts.cpus),
    memory: `${facts.memoryKi}Ki`,
    pods: '110',
    'ephemeral-storage': '100Gi',
    'hugepages-2Mi': '0',
  };
  return {
    capacity,
    allocatable: capacity,
    conditions: [
      condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available', now, since),
      condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure', now, since),
      condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available', now, since),
      condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status (dplab sim kubelet stand-in)', now, since),
    ],
    addresses: [
      { type: 'InternalIP', address: config.nodeIP },
      { type: 'Hostname', address: config.nodeName },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: KUBELET_PORT } },
    nodeInfo: {
      machineID: facts.machineID,
      systemUUID: facts.machineID,
      bootID: facts.bootID,
      kernelVersion: facts.kernelVersion,
      // The note that this is not a kubelet: a reader of `kubectl get nodes -o wide` sees it.
      osImage: `${facts.osImage} (dplab sim: network-namespace node, kubelet stand-in)`,
      containerRuntimeVersion: 'dplab-sim://0.1.0',
      kubeletVersion: KUBELET_VERSION,
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: facts.architecture,
    },
  };
}

export function nodeObject(config: KubeletConfig, facts: MachineFacts, now: string) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: config.nodeName,
      labels: nodeLabels(config, facts.architecture),
      annotations: { 'node.alpha.kubernetes.io/ttl': '0', 'dplab.dev/kubelet': 'sim stand-in (scripts/sim/kubelet)' },
    },
    spec: config.taints.length ? { taints: config.taints } : {},
    status: nodeStatus(config, facts, now, now),
  };
}

/** The node's Lease in kube-node-lease: what the node lifecycle controller watches for liveness. */
export function leaseObject(nodeName: string, nodeUid: string, durationSeconds: number, now: string) {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: nodeName,
      namespace: 'kube-node-lease',
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: nodeUid }],
    },
    spec: { holderIdentity: nodeName, leaseDurationSeconds: durationSeconds, renewTime: now },
  };
}

/** MicroTime as the API wants it for renewTime. */
export function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
