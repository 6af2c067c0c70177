// A small description of "what the cluster holds, seen from one node", from which the synth
// writers print each tool's output. Used to write the fixtures and the benchmark input.

export interface SynthEndpoint {
  ip: string;
  node: string;
}

export interface SynthService {
  namespace: string;
  name: string;
  /** Port name, "" when the Service port is unnamed. */
  portName: string;
  protocol: 'tcp' | 'udp';
  clusterIP: string;
  port: number;
  targetPort: number;
  nodePort?: number;
  healthCheckNodePort?: number;
  externalTrafficPolicyLocal?: boolean;
  affinitySeconds?: number;
  endpoints: SynthEndpoint[];
}

interface SynthNode {
  name: string;
  ip: string;
}

export interface SynthCluster {
  /** The node whose rules are printed. */
  node: SynthNode;
  clusterCidr: string;
  serviceCidr: string;
  services: SynthService[];
}

export function servicePortName(s: SynthService): string {
  return s.portName ? `${s.namespace}/${s.name}:${s.portName}` : `${s.namespace}/${s.name}`;
}

export function localEndpoints(c: SynthCluster, s: SynthService): SynthEndpoint[] {
  return s.endpoints.filter((e) => e.node === c.node.name);
}

/** Endpoints external traffic may use on this node: all, or only local ones with Local policy. */
export function externalEndpoints(c: SynthCluster, s: SynthService): SynthEndpoint[] {
  return s.externalTrafficPolicyLocal ? localEndpoints(c, s) : s.endpoints;
}
