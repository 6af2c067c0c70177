/**
 * Every container image the clusters and labs need, as data: its references (the names kind,
 * kubeadm, the Cilium chart and the labs' manifests use, so the product pulls nothing and runs
 * unchanged), its layers and its config. None is the upstream image; each is built here from
 * the same sources, and where it differs that is said next to it:
 * - control plane, etcd, CoreDNS: the static binary alone (upstream: distroless + go-runner);
 * - kube-proxy, kindnetd, agnhost, local-path: on the shared Debian tools layer (upstream:
 *   distroless-iptables, Alpine for agnhost);
 * - kindnetd is this environment's stand-in (test/kind/kindnetd/main.go), because kind's is a
 *   nested module the module proxy does not serve;
 * - Cilium's agent carries Debian's LLVM 19.1.7 and bpftool 7.1 (upstream: its own builds of
 *   LLVM 19.1.7 and bpftool 7.7) and no Envoy (Envoy is a C++/Bazel build that downloads its
 *   toolchain: it cannot be built from this machine's package sources).
 */
import { AGNHOST_VERSION, CILIUM_VERSION, KUBERNETES_VERSION, SIM_COREDNS_VERSION, SIM_ETCD_VERSION } from '../../scripts/base/versions.ts';
import { DEFAULT_PATH, type ImageSpec } from './docker-archive.ts';
import type { LayerSpec } from './layers.ts';

/** kind v0.31.0's pkg/build/nodeimage/const_cni.go and const_storage.go. */
const KINDNETD_IMAGE = 'docker.io/kindest/kindnetd:v20251212-v0.29.0-alpha-105-g20ccfc88';
const LOCAL_PATH_IMAGE = 'docker.io/kindest/local-path-provisioner:v20251212-v0.29.0-alpha-105-g20ccfc88';
const LOCAL_PATH_HELPER_IMAGE = 'docker.io/kindest/local-path-helper:v20251211-v0.29.0-alpha-100-g82a92c5d';
export const AGNHOST_IMAGE = `registry.k8s.io/e2e-test-images/agnhost:${AGNHOST_VERSION}`;

export interface ImageInputs {
  /** A Go-built program (the test environment's or the sim's build). */
  bin(name: string): string;
  /** The pause binary compiled from k8s.io/kubernetes' build/pause/linux/pause.c. */
  pause: string;
  /** test/kind/images/iptables-wrapper. */
  iptablesWrapper: string;
  /** Root filesystem folders. */
  toolsRootfs: string;
  ciliumRootfs: string;
  /** github.com/cilium/cilium@v1.19.4 in the module cache (bpf/, images/cilium/, plugins/cilium-cni/). */
  ciliumModule: string;
}

const IPTABLES_COMMANDS = ['iptables', 'iptables-save', 'iptables-restore', 'ip6tables', 'ip6tables-save', 'ip6tables-restore'];
const wrapperLinks = (): [string, string][] => IPTABLES_COMMANDS.map((c) => [`usr/sbin/${c}`, 'iptables-wrapper']);
const TMP: [string, number] = ['tmp', 0o1777];

/** Cilium's Makefile (install-bpf) copies bpf/ without its tests, custom programs and Makefiles. */
function ciliumBpfSource(rel: string): boolean {
  return !/^(tests|complexity-tests|custom)\//.test(rel) && !/^(Makefile|Makefile\.bpf|\.gitignore)$/.test(rel);
}

function layers(i: ImageInputs): Record<string, LayerSpec> {
  const staticBin = (name: string, to = `usr/local/bin/${name}`): LayerSpec => ({
    name,
    files: [{ from: i.bin(name), to }],
    dirs: [TMP],
  });
  /** A program that runs iptables through the wrapper (kube-proxy, kindnetd): the binary, the wrapper and its links. */
  const withIptablesWrapper = (name: string, to: string) => ({
    name,
    files: [
      { from: i.bin(name), to },
      { from: i.iptablesWrapper, to: 'usr/sbin/iptables-wrapper' },
    ],
    links: wrapperLinks(),
  });
  return {
    tools: { name: 'tools', rootfs: i.toolsRootfs },
    ciliumRuntime: { name: 'cilium-runtime', rootfs: i.ciliumRootfs },
    apiserver: staticBin('kube-apiserver'),
    controllerManager: staticBin('kube-controller-manager'),
    scheduler: staticBin('kube-scheduler'),
    etcd: staticBin('etcd'),
    coredns: staticBin('coredns', 'coredns'),
    pause: { name: 'pause', files: [{ from: i.pause, to: 'pause' }] },
    kubeProxy: withIptablesWrapper('kube-proxy', 'usr/local/bin/kube-proxy'),
    // /bin is Debian's link to usr/bin: a layer that made a real bin/ folder would hide /bin/sh.
    kindnetd: withIptablesWrapper('kindnetd', 'usr/bin/kindnetd'),
    localPath: staticBin('local-path-provisioner'),
    agnhost: {
      name: 'agnhost',
      files: [{ from: i.bin('agnhost'), to: 'agnhost' }],
      links: [['agnhost-2', 'agnhost']],
      dirs: [['uploads', 0o755]],
    },
    cilium: {
      name: 'cilium',
      files: [
        ...[
          'cilium-agent',
          'cilium-dbg',
          'cilium-health',
          'cilium-health-responder',
          'cilium-bugtool',
          'hubble',
          'cilium-mount',
          'cilium-sysctlfix',
        ].map((b) => ({ from: i.bin(b), to: `usr/bin/${b}` })),
        { from: i.bin('cilium-cni'), to: 'opt/cni/bin/cilium-cni' },
        { from: i.bin('loopback'), to: 'cni/loopback' },
        { from: `${i.ciliumModule}/images/cilium/init-container.sh`, to: 'init-container.sh' },
        { from: `${i.ciliumModule}/plugins/cilium-cni/install-plugin.sh`, to: 'install-plugin.sh' },
        { from: `${i.ciliumModule}/plugins/cilium-cni/cni-uninstall.sh`, to: 'cni-uninstall.sh' },
        { from: i.iptablesWrapper, to: 'usr/sbin/iptables-wrapper' },
      ],
      trees: [{ from: `${i.ciliumModule}/bpf`, to: 'var/lib/cilium/bpf', keep: ciliumBpfSource }],
      links: [...wrapperLinks(), ['usr/local/bin/clang', '/usr/lib/llvm-19/bin/clang'], ['usr/local/bin/llc', '/usr/lib/llvm-19/bin/llc']],
      dirs: [['home/cilium', 0o755]],
    },
    ciliumOperator: staticBin('cilium-operator-generic', 'usr/bin/cilium-operator-generic'),
    hubbleRelay: staticBin('hubble-relay', 'usr/bin/hubble-relay'),
  };
}

export interface Catalogue {
  layers: Record<string, LayerSpec>;
  images: Record<string, { tags: string[]; layers: string[]; config: ImageSpec['config'] }>;
}

const env = (...extra: string[]) => [DEFAULT_PATH, ...extra];

/** Images by key; `layers` name keys of layers(). */
export function catalogue(i: ImageInputs): Catalogue {
  const k = `v${KUBERNETES_VERSION}`;
  return {
    layers: layers(i),
    images: {
      apiserver: {
        tags: [`registry.k8s.io/kube-apiserver:${k}`],
        layers: ['apiserver'],
        config: { Env: env(), Entrypoint: ['/usr/local/bin/kube-apiserver'] },
      },
      controllerManager: {
        tags: [`registry.k8s.io/kube-controller-manager:${k}`],
        layers: ['controllerManager'],
        config: { Env: env(), Entrypoint: ['/usr/local/bin/kube-controller-manager'] },
      },
      scheduler: {
        tags: [`registry.k8s.io/kube-scheduler:${k}`],
        layers: ['scheduler'],
        config: { Env: env(), Entrypoint: ['/usr/local/bin/kube-scheduler'] },
      },
      kubeProxy: {
        tags: [`registry.k8s.io/kube-proxy:${k}`],
        layers: ['tools', 'kubeProxy'],
        config: { Env: env(), Entrypoint: ['/usr/local/bin/kube-proxy'] },
      },
      // kubeadm v1.35.0 pins etcd 3.6.6-0 and CoreDNS v1.13.1 (cmd/kubeadm/app/constants).
      etcd: { tags: [`registry.k8s.io/etcd:${SIM_ETCD_VERSION}-0`], layers: ['etcd'], config: { Env: env() } },
      coredns: {
        tags: [`registry.k8s.io/coredns/coredns:v${SIM_COREDNS_VERSION}`],
        layers: ['coredns'],
        config: { Env: env(), Entrypoint: ['/coredns'] },
      },
      // kind's containerd config names pause 3.10 as the sandbox image; kubeadm lists 3.10.1. One build of 3.10.1's source serves both.
      pause: {
        tags: ['registry.k8s.io/pause:3.10', 'registry.k8s.io/pause:3.10.1'],
        layers: ['pause'],
        config: { Entrypoint: ['/pause'], User: '65535:65535' },
      },
      kindnetd: { tags: [KINDNETD_IMAGE], layers: ['tools', 'kindnetd'], config: { Env: env(), Cmd: ['/bin/kindnetd'] } },
      localPath: {
        tags: [LOCAL_PATH_IMAGE],
        layers: ['tools', 'localPath'],
        config: { Env: env(), Entrypoint: ['/usr/local/bin/local-path-provisioner'] },
      },
      localPathHelper: { tags: [LOCAL_PATH_HELPER_IMAGE], layers: ['tools'], config: { Env: env() } },
      agnhost: { tags: [AGNHOST_IMAGE], layers: ['tools', 'agnhost'], config: { Env: env(), Entrypoint: ['/agnhost'], Cmd: ['pause'] } },
      cilium: {
        tags: [`quay.io/cilium/cilium:v${CILIUM_VERSION}`],
        layers: ['ciliumRuntime', 'cilium'],
        config: {
          Env: env('HUBBLE_SERVER=unix:///var/run/cilium/hubble.sock', 'INITSYSTEM=SYSTEMD'),
          WorkingDir: '/home/cilium',
          Cmd: ['/usr/bin/cilium-dbg'],
        },
      },
      ciliumOperator: {
        tags: [`quay.io/cilium/operator-generic:v${CILIUM_VERSION}`],
        layers: ['ciliumOperator'],
        config: { Env: env(), Entrypoint: ['/usr/bin/cilium-operator-generic'] },
      },
      hubbleRelay: {
        tags: [`quay.io/cilium/hubble-relay:v${CILIUM_VERSION}`],
        layers: ['hubbleRelay'],
        config: { Env: env(), Entrypoint: ['/usr/bin/hubble-relay'], Cmd: ['serve'] },
      },
    },
  };
}

/**
 * How kind's node-image builder gets the images: its four archive paths (kubernetes/server/bin/
 * kube-*.tar), each free to hold more images. Everything a node needs before a lab starts goes in
 * (kubeadm's images, kind's CNI and storage, Cilium's), so nothing is pulled; agnhost stays out:
 * the product's own `kind load docker-image` brings it, as on a learner's machine.
 */
export const NODE_IMAGE_ARCHIVES: Record<string, readonly string[]> = {
  'kube-apiserver': ['apiserver', 'pause', 'etcd'],
  'kube-controller-manager': ['controllerManager', 'coredns'],
  'kube-scheduler': ['scheduler', 'kindnetd', 'localPath', 'localPathHelper'],
  'kube-proxy': ['kubeProxy', 'cilium', 'ciliumOperator', 'hubbleRelay'],
};

/** Loaded into the engine too: what the product's `images` step loads into the nodes. */
export const ENGINE_IMAGES = ['agnhost'];
