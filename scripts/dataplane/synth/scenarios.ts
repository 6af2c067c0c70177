// The fixture scenarios: one kind cluster (control plane + two workers), the `web` Service in the
// shapes the course teaches, seen from one node. The headless `default/web-headless` exists in
// every scenario's cluster and, like on a real node, appears in no tool's output.
import type { SynthCluster, SynthService } from './cluster.ts';

export const SCENARIOS = [
  'clusterip',
  'nodeport',
  'etp-local-with-endpoints',
  'etp-local-without-endpoints',
  'affinity',
  'no-endpoints',
] as const;
export type ScenarioId = (typeof SCENARIOS)[number];

const CLUSTER_CIDR = '10.244.0.0/16';
// kind's default service subnet (a /16 inside kubeadm's 10.96.0.0/12).
const SERVICE_CIDR = '10.96.0.0/16';
const WEB = { clusterIP: '10.96.45.112', port: 80, targetPort: 8080, nodePort: 30080, healthCheckNodePort: 31514 };
const WEB_IDLE = { clusterIP: '10.96.118.20', port: 80, nodePort: 30081 };

function nodeNames(cluster: string) {
  return { controlPlane: `${cluster}-control-plane`, worker: `${cluster}-worker`, worker2: `${cluster}-worker2` };
}
const NODE_IPS = { controlPlane: '172.18.0.2', worker: '172.18.0.3', worker2: '172.18.0.4' };
/** agnhost netexec pods of `web`: two on worker, one on worker2. */
const WEB_PODS = [
  { ip: '10.244.1.2', on: 'worker' },
  { ip: '10.244.1.3', on: 'worker' },
  { ip: '10.244.2.2', on: 'worker2' },
] as const;

export function scenario(id: ScenarioId, cluster = 'dplab'): SynthCluster {
  const n = nodeNames(cluster);
  const onNode =
    id === 'etp-local-without-endpoints' ? { name: n.controlPlane, ip: NODE_IPS.controlPlane } : { name: n.worker, ip: NODE_IPS.worker };
  const web: SynthService = {
    namespace: 'default',
    name: 'web',
    portName: '',
    protocol: 'tcp',
    clusterIP: WEB.clusterIP,
    port: WEB.port,
    targetPort: WEB.targetPort,
    endpoints: WEB_PODS.map((p) => ({ ip: p.ip, node: n[p.on] })),
  };
  if (id !== 'clusterip' && id !== 'affinity') web.nodePort = WEB.nodePort;
  if (id === 'etp-local-with-endpoints' || id === 'etp-local-without-endpoints') {
    web.externalTrafficPolicyLocal = true;
    web.healthCheckNodePort = WEB.healthCheckNodePort;
  }
  if (id === 'affinity') web.affinitySeconds = 10800;
  const services = [...systemServices(n.controlPlane), web];
  if (id === 'no-endpoints') {
    services.push({
      namespace: 'default',
      name: 'web-idle',
      portName: '',
      protocol: 'tcp',
      clusterIP: WEB_IDLE.clusterIP,
      port: WEB_IDLE.port,
      targetPort: 8080,
      nodePort: WEB_IDLE.nodePort,
      endpoints: [],
    });
  }
  return { node: onNode, clusterCidr: CLUSTER_CIDR, serviceCidr: SERVICE_CIDR, services };
}

function systemServices(controlPlane: string): SynthService[] {
  const dns = [
    { ip: '10.244.0.2', node: controlPlane },
    { ip: '10.244.0.3', node: controlPlane },
  ];
  const kubeDns = (portName: string, protocol: 'tcp' | 'udp', port: number): SynthService => ({
    namespace: 'kube-system',
    name: 'kube-dns',
    portName,
    protocol,
    clusterIP: '10.96.0.10',
    port,
    targetPort: port,
    endpoints: dns,
  });
  return [
    {
      namespace: 'default',
      name: 'kubernetes',
      portName: 'https',
      protocol: 'tcp',
      clusterIP: '10.96.0.1',
      port: 443,
      targetPort: 6443,
      endpoints: [{ ip: NODE_IPS.controlPlane, node: controlPlane }],
    },
    kubeDns('dns', 'udp', 53),
    kubeDns('dns-tcp', 'tcp', 53),
    kubeDns('metrics', 'tcp', 9153),
  ];
}
