/**
 * What the kind test environment builds with Go, from wrapper modules in test/kind/go/ (and the
 * sim's k8s.io/kubernetes module for kubeadm and the kubelet), at the versions kind v0.31.0's
 * base image and node image use where the module proxy serves them. The control-plane images,
 * kube-proxy, kubectl, etcd, CoreDNS and agnhost come from the sim provider's own builds
 * (scripts/sim/components.ts): one build of each serves both.
 */
import { CILIUM_VERSION, HELM_VERSION, KIND_VERSION } from '../../scripts/base/versions.ts';
import { k8s, type GoComponent } from '../../scripts/sim/components.ts';

/** kind v0.31.0's images/base/Dockerfile pins these; crictl and the storage provisioner differ (see their go.mod). */
const BASE_VERSIONS = {
  containerd: '2.2.0',
  runc: '1.2.9',
  crictl: '1.34.0',
  cniPlugins: '1.8.0',
  localPathProvisioner: '0.0.30',
  helm: HELM_VERSION,
} as const;

const mod = (name: string) => `test/kind/go/${name}`;
const CONTAINERD_TAGS = ['no_aufs', 'no_zfs', 'no_btrfs', 'no_devmapper'];
const containerdVersion = [`-X github.com/containerd/containerd/v2/version.Version=v${BASE_VERSIONS.containerd}`];
/** Cilium's Makefile stamps "<version> <revision> <date>"; `cilium-dbg version` and the agent parse three words. */
const ciliumVersion = [`-X "github.com/cilium/cilium/pkg/version.ciliumVersion=${CILIUM_VERSION} module-proxy 1970-01-01T00:00:00Z"`];

const cni = (plugin: string): GoComponent => ({
  name: plugin.split('/').pop()!,
  moduleDir: mod('cni'),
  pkg: `github.com/containernetworking/plugins/plugins/${plugin}`,
  version: `v${BASE_VERSIONS.cniPlugins}`,
});

const cilium = (name: string, pkg: string, tags: string[] = []): GoComponent => ({
  name,
  moduleDir: mod('cilium'),
  pkg: `github.com/cilium/cilium/${pkg}`,
  version: `v${CILIUM_VERSION}`,
  tags: ['osusergo', ...tags],
  ldflags: ciliumVersion,
});

/** Programs on the host (kind, helm), in the node image, and in the images. */
export const TESTENV_COMPONENTS: readonly GoComponent[] = [
  { name: 'dplab-runc', moduleDir: 'test/kind/runtime', pkg: '.', version: '0.1.0' },
  { name: 'kind', moduleDir: mod('kind'), pkg: 'sigs.k8s.io/kind', version: `v${KIND_VERSION}` },
  {
    name: 'helm',
    moduleDir: mod('helm'),
    pkg: 'helm.sh/helm/v3/cmd/helm',
    version: `v${BASE_VERSIONS.helm}`,
    ldflags: [`-X helm.sh/helm/v3/internal/version.version=v${BASE_VERSIONS.helm}`],
  },
  k8s('kubeadm', 'k8s.io/kubernetes/cmd/kubeadm'),
  k8s('kubelet', 'k8s.io/kubernetes/cmd/kubelet'),
  ...['containerd', 'ctr', 'containerd-shim-runc-v2'].map((name): GoComponent => ({
    name,
    moduleDir: mod('containerd'),
    pkg: `github.com/containerd/containerd/v2/cmd/${name}`,
    version: `v${BASE_VERSIONS.containerd}`,
    tags: CONTAINERD_TAGS,
    cgo: true,
    ldflags: containerdVersion,
  })),
  {
    name: 'runc',
    moduleDir: mod('runc'),
    pkg: 'github.com/opencontainers/runc',
    version: `v${BASE_VERSIONS.runc}`,
    tags: ['seccomp', 'urfave_cli_no_docs'],
    cgo: true,
    ldflags: [`-X main.version=${BASE_VERSIONS.runc}`],
  },
  {
    name: 'crictl',
    moduleDir: mod('crictl'),
    pkg: 'sigs.k8s.io/cri-tools/cmd/crictl',
    version: `v${BASE_VERSIONS.crictl}`,
    ldflags: [`-X sigs.k8s.io/cri-tools/pkg/version.Version=v${BASE_VERSIONS.crictl}`],
  },
  cni('ipam/host-local'),
  cni('main/loopback'),
  cni('main/ptp'),
  cni('meta/portmap'),
  { name: 'kindnetd', moduleDir: 'test/kind/kindnetd', pkg: '.', version: 'dplab stand-in 0.1.0' },
  {
    name: 'local-path-provisioner',
    moduleDir: mod('local-path-provisioner'),
    pkg: 'github.com/rancher/local-path-provisioner',
    version: `v${BASE_VERSIONS.localPathProvisioner}`,
  },
  cilium('cilium-agent', 'daemon'),
  cilium('cilium-dbg', 'cilium-dbg'),
  cilium('cilium-health', 'cilium-health'),
  cilium('cilium-health-responder', 'cilium-health/responder'),
  cilium('cilium-bugtool', 'bugtool'),
  cilium('hubble', 'hubble'),
  cilium('cilium-mount', 'tools/mount'),
  cilium('cilium-sysctlfix', 'tools/sysctlfix'),
  cilium('cilium-cni', 'plugins/cilium-cni'),
  cilium('cilium-operator-generic', 'operator', ['ipam_provider_operator']),
  cilium('hubble-relay', 'hubble-relay'),
];

/** The sim provider's builds the images reuse. */
export const SIM_REUSED = [
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kube-proxy',
  'kubectl',
  'etcd',
  'coredns',
  'agnhost',
];
