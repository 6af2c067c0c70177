/**
 * The one table of what the sim provider builds: each real component, the Go module it is built
 * from (a small wrapper module in this folder, committed as go.mod/go.sum only), the package with
 * its `main`, the binary it produces and the version it reports. build.ts reads nothing else.
 */
import { AGNHOST_VERSION, KUBERNETES_VERSION, SIM_COREDNS_VERSION, SIM_ETCD_VERSION } from '../base/versions.ts';

export interface GoComponent {
  /** Binary name in the cache's bin/ folder. */
  name: string;
  /** The module to build in, relative to the project root (its go.mod pins the version). */
  moduleDir: string;
  /** Import path of the `main` package. */
  pkg: string;
  /** What the binary reports as its version (for recordings' `source`). */
  version: string;
  /** Extra `-ldflags` (version stamps). */
  ldflags?: readonly string[];
  /** Build tags (`-tags`). */
  tags?: readonly string[];
  /** Build with cgo (runc's seccomp, containerd): needs gcc and the C headers; default off, a static binary. */
  cgo?: boolean;
}

/** What k8s.io/kubernetes' own build (hack/lib/version.sh) stamps, so `--version` and /version say v1.35.0. */
function kubeVersionFlags(): string[] {
  const [major, minor] = KUBERNETES_VERSION.split('.');
  const v = `v${KUBERNETES_VERSION}`;
  return ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].flatMap((p) => [
    `-X ${p}.gitVersion=${v}`,
    `-X ${p}.gitMajor=${major}`,
    `-X ${p}.gitMinor=${minor}`,
    `-X ${p}.gitTreeState=clean`,
    `-X ${p}.buildDate=1970-01-01T00:00:00Z`,
  ]);
}

const K8S_MODULE = 'scripts/sim/go';
/** A program of the k8s.io/kubernetes wrapper module, stamped with the pinned version. */
export const k8s = (name: string, pkg: string): GoComponent => ({
  name,
  moduleDir: K8S_MODULE,
  pkg,
  version: `v${KUBERNETES_VERSION}`,
  ldflags: kubeVersionFlags(),
});

export const SIM_COMPONENTS: readonly GoComponent[] = [
  k8s('kube-apiserver', 'k8s.io/kubernetes/cmd/kube-apiserver'),
  k8s('kube-controller-manager', 'k8s.io/kubernetes/cmd/kube-controller-manager'),
  k8s('kube-scheduler', 'k8s.io/kubernetes/cmd/kube-scheduler'),
  k8s('kube-proxy', 'k8s.io/kubernetes/cmd/kube-proxy'),
  k8s('kubectl', 'k8s.io/kubernetes/cmd/kubectl'),
  // The labs' workload, the agnhost their manifests name (registry.k8s.io/e2e-test-images/agnhost:2.53):
  // test/images/agnhost of k8s.io/kubernetes v1.32.0, whose VERSION file says 2.53 (v1.35.0's says 2.59).
  { name: 'agnhost', moduleDir: 'scripts/sim/go-agnhost', pkg: 'k8s.io/kubernetes/test/images/agnhost', version: AGNHOST_VERSION },
  { name: 'etcd', moduleDir: 'scripts/sim/go-etcd', pkg: 'go.etcd.io/etcd/server/v3', version: `v${SIM_ETCD_VERSION}` },
  { name: 'coredns', moduleDir: 'scripts/sim/go-coredns', pkg: 'github.com/coredns/coredns', version: `v${SIM_COREDNS_VERSION}` },
  // The kubelet stand-in's exec/logs server (k8s.io/kubelet's streaming code; scripts/sim/exec-server).
  { name: 'dplab-exec-server', moduleDir: 'scripts/sim/exec-server', pkg: 'dataplane-lab.invalid/sim/exec-server', version: '0.1.0' },
];

/** "kube-apiserver v1.35.0, …": every component and its version, for a recording's `source`. */
export function componentVersions(): Record<string, string> {
  return Object.fromEntries(SIM_COMPONENTS.map((c) => [c.name, c.version]));
}
