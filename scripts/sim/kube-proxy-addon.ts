/**
 * kubeadm's kube-proxy addon as the sim applies it, so that the labs meet kube-proxy where they
 * meet it on kind: the `kube-proxy` ConfigMap in kube-system (`config.conf` is kind's
 * KubeProxyConfiguration as kubeadm v1.35.0 writes it, every field spelled out, as printed by
 * `kubeadm init phase addon kube-proxy --dry-run`), its ServiceAccount and RBAC, and the DaemonSet,
 * whose pods the kubelet stand-ins run as the built kube-proxy (kubelet/images.ts). Editing the
 * ConfigMap and `kubectl rollout restart daemonset kube-proxy` therefore work as on kind.
 * One difference: `kubeconfig.conf` names the sim's system:kube-proxy client certificate (by path:
 * a pod sees the host's files) instead of the service account token, which the stand-in does not
 * mount. Pure.
 */
import type { SimLayout } from './layout.ts';

/** What kube-proxy's kubeconfig needs from the sim's control plane. */
export interface KubeProxyCredentials {
  server: string;
  caFile: string;
  certFile: string;
  keyFile: string;
}

/** Where kubeadm's DaemonSet mounts the ConfigMap. */
const CONFIG_DIR = '/var/lib/kube-proxy';

/** kind's settings (mode, pod CIDR, iptables.minSyncPeriod 1s, conntrack.maxPerCore 0) in kubeadm's full form. */
export function kubeProxyConfig(layout: Pick<SimLayout, 'mode' | 'podSubnet'>): string {
  return `apiVersion: kubeproxy.config.k8s.io/v1alpha1
bindAddress: 0.0.0.0
bindAddressHardFail: false
clientConnection:
  acceptContentTypes: ""
  burst: 0
  contentType: ""
  kubeconfig: ${CONFIG_DIR}/kubeconfig.conf
  qps: 0
clusterCIDR: ${layout.podSubnet}
configSyncPeriod: 0s
conntrack:
  maxPerCore: 0
  min: null
  tcpBeLiberal: false
  tcpCloseWaitTimeout: null
  tcpEstablishedTimeout: null
  udpStreamTimeout: 0s
  udpTimeout: 0s
detectLocal:
  bridgeInterface: ""
  interfaceNamePrefix: ""
detectLocalMode: ""
enableProfiling: false
healthzBindAddress: ""
hostnameOverride: ""
iptables:
  localhostNodePorts: null
  masqueradeAll: false
  masqueradeBit: null
  minSyncPeriod: 1s
  syncPeriod: 0s
ipvs:
  excludeCIDRs: null
  minSyncPeriod: 0s
  scheduler: ""
  strictARP: false
  syncPeriod: 0s
  tcpFinTimeout: 0s
  tcpTimeout: 0s
  udpTimeout: 0s
kind: KubeProxyConfiguration
logging:
  flushFrequency: 0
  options:
    json:
      infoBufferSize: "0"
    text:
      infoBufferSize: "0"
  verbosity: 0
metricsBindAddress: ""
mode: ${layout.mode}
nftables:
  masqueradeAll: false
  masqueradeBit: null
  minSyncPeriod: 0s
  syncPeriod: 0s
nodePortAddresses: null
oomScoreAdj: null
portRange: ""
showHiddenMetricsForVersion: ""
winkernel:
  enableDSR: false
  forwardHealthCheckVip: false
  networkName: ""
  rootHnsEndpointName: ""
  sourceVip: ""`;
}

function kubeconfig(c: KubeProxyCredentials): string {
  return `apiVersion: v1
kind: Config
clusters:
- cluster:
    certificate-authority: ${c.caFile}
    server: ${c.server}
  name: default
contexts:
- context:
    cluster: default
    namespace: default
    user: default
  name: default
current-context: default
users:
- name: default
  user:
    client-certificate: ${c.certFile}
    client-key: ${c.keyFile}`;
}

/** The objects kubeadm creates for the addon, as one List for `kubectl apply -f -`. */
export function kubeProxyAddon(layout: Pick<SimLayout, 'mode' | 'podSubnet'>, creds: KubeProxyCredentials, version: string): string {
  const ns = 'kube-system';
  const items = [
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kube-proxy', namespace: ns, labels: { app: 'kube-proxy' } },
      data: { 'config.conf': kubeProxyConfig(layout), 'kubeconfig.conf': kubeconfig(creds) },
    },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'kube-proxy', namespace: ns } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'kubeadm:node-proxier' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:node-proxier' },
      subjects: [{ kind: 'ServiceAccount', name: 'kube-proxy', namespace: ns }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'kube-proxy', namespace: ns },
      rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['kube-proxy'], verbs: ['get'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'kube-proxy', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'kube-proxy' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:bootstrappers:kubeadm:default-node-token' }],
    },
    {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'kube-proxy', namespace: ns, labels: { 'k8s-app': 'kube-proxy' } },
      spec: {
        selector: { matchLabels: { 'k8s-app': 'kube-proxy' } },
        updateStrategy: { type: 'RollingUpdate' },
        template: {
          metadata: { labels: { 'k8s-app': 'kube-proxy' } },
          spec: {
            containers: [
              {
                name: 'kube-proxy',
                image: `registry.k8s.io/kube-proxy:${version}`,
                imagePullPolicy: 'IfNotPresent',
                command: ['/usr/local/bin/kube-proxy', `--config=${CONFIG_DIR}/config.conf`, '--hostname-override=$(NODE_NAME)'],
                env: [{ name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
                securityContext: { privileged: true },
                volumeMounts: [
                  { mountPath: CONFIG_DIR, name: 'kube-proxy' },
                  { mountPath: '/run/xtables.lock', name: 'xtables-lock' },
                  { mountPath: '/lib/modules', name: 'lib-modules', readOnly: true },
                ],
              },
            ],
            hostNetwork: true,
            nodeSelector: { 'kubernetes.io/os': 'linux' },
            priorityClassName: 'system-node-critical',
            serviceAccountName: 'kube-proxy',
            tolerations: [{ operator: 'Exists' }],
            volumes: [
              { name: 'kube-proxy', configMap: { name: 'kube-proxy' } },
              { name: 'xtables-lock', hostPath: { path: '/run/xtables.lock', type: 'FileOrCreate' } },
              { name: 'lib-modules', hostPath: { path: '/lib/modules' } },
            ],
          },
        },
      },
    },
  ];
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
}
