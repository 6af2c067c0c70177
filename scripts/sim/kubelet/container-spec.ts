/**
 * A container's argv and environment from its pod spec, as the kubelet and the runtime build
 * them. Pure. The agnhost image's entrypoint is `/agnhost` with default args `pause`; a command
 * naming /agnhost runs the built binary; any other command runs from the host's PATH (the pod
 * sees the host's filesystem: the sandbox isolates network, hostname, resolv.conf and hosts).
 */
import { IMAGE_PATHS, type SimBinary } from './images.ts';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string } };
}

export interface ContainerSpec {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  ports?: Array<{ name?: string; containerPort: number; protocol?: string }>;
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean; subPath?: string }>;
}

export interface PodFacts {
  name: string;
  namespace: string;
  uid: string;
  nodeName: string;
  podIP: string;
  hostIP: string;
  serviceAccountName: string;
}

/** `$(VAR)` references expanded from the env built so far; `$$(VAR)` escapes, unknown stay as written. */
export function expandRefs(text: string, env: Record<string, string>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (m, name: string | undefined) => {
    if (m === '$$') return '$';
    return name !== undefined && name in env ? env[name] : m;
  });
}

function fieldValue(path: string, pod: PodFacts): string | undefined {
  switch (path) {
    case 'metadata.name':
      return pod.name;
    case 'metadata.namespace':
      return pod.namespace;
    case 'metadata.uid':
      return pod.uid;
    case 'spec.nodeName':
      return pod.nodeName;
    case 'spec.serviceAccountName':
      return pod.serviceAccountName;
    case 'status.podIP':
      return pod.podIP;
    case 'status.hostIP':
      return pod.hostIP;
    default:
      return undefined;
  }
}

/** Service links first (as the kubelet puts them), then the container's own env, in order. */
export function containerEnv(container: ContainerSpec, pod: PodFacts, serviceEnv: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = { HOSTNAME: pod.name, ...serviceEnv };
  for (const v of container.env ?? []) {
    if (v.value !== undefined) env[v.name] = expandRefs(v.value, env);
    else if (v.valueFrom?.fieldRef) {
      const value = fieldValue(v.valueFrom.fieldRef.fieldPath, pod);
      if (value !== undefined) env[v.name] = value;
    } else env[v.name] = '';
  }
  return env;
}

export interface Service {
  metadata: { name: string };
  spec: { clusterIP?: string; ports?: Array<{ name?: string; port: number; protocol?: string }> };
}

/** Docker-link style variables for each Service with a cluster IP (enableServiceLinks). */
export function serviceLinkEnv(services: Service[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const s of services) {
    const ip = s.spec.clusterIP;
    if (!ip || ip === 'None' || !s.spec.ports?.length) continue;
    const prefix = s.metadata.name.toUpperCase().replace(/-/g, '_');
    const first = s.spec.ports[0];
    env[`${prefix}_SERVICE_HOST`] = ip;
    env[`${prefix}_SERVICE_PORT`] = String(first.port);
    for (const p of s.spec.ports) {
      if (p.name) env[`${prefix}_SERVICE_PORT_${p.name.toUpperCase().replace(/-/g, '_')}`] = String(p.port);
      const proto = (p.protocol ?? 'TCP').toUpperCase();
      const base = `${prefix}_PORT_${p.port}_${proto}`;
      env[base] = `${proto.toLowerCase()}://${ip}:${p.port}`;
      env[`${base}_PROTO`] = proto.toLowerCase();
      env[`${base}_PORT`] = String(p.port);
      env[`${base}_ADDR`] = ip;
    }
    env[`${prefix}_PORT`] = `${(first.protocol ?? 'TCP').toLowerCase()}://${ip}:${first.port}`;
  }
  return env;
}

/**
 * The argv the container runs: image entrypoint/cmd overridden by command/args, refs expanded.
 * A command naming the image's binary runs the built one from binDir; only agnhost's image has
 * a default entrypoint (`/agnhost pause`).
 */
export function containerArgv(container: ContainerSpec, env: Record<string, string>, binDir: string): string[] {
  const command = container.command?.length ? container.command : ['/agnhost'];
  const args = container.args ?? (container.command?.length ? [] : ['pause']);
  const argv = [...command, ...args].map((a) => expandRefs(a, env));
  const binary = (Object.keys(IMAGE_PATHS) as SimBinary[]).find((b) => IMAGE_PATHS[b].includes(argv[0]));
  if (binary) argv[0] = `${binDir}/${binary}`;
  return argv;
}

export function namedPorts(container: ContainerSpec): Record<string, number> {
  return Object.fromEntries((container.ports ?? []).filter((p) => p.name).map((p) => [p.name as string, p.containerPort]));
}
