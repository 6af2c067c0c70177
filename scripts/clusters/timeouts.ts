/** How long each provisioning step may take. Tests pass small values; people get these. */
import { TIMEOUT_FACTOR, TIMEOUTS } from '../base/exec.ts';

export interface ProvisionTimeouts {
  /** `kind create cluster`, which pulls the node image on first use. */
  create: number;
  /** `cilium install` / `helm upgrade --install` (the chart and its images). */
  ciliumInstall: number;
  /** Nodes Ready; DaemonSet and Deployment rollouts (each). */
  rollout: number;
  /** Cilium reporting `KubeProxyReplacement: True` after its DaemonSet is ready. */
  kubeProxyReplacement: number;
  /** Each step of putting the lab images into the node image: pulling kind's node image, saving the lab images, importing them. */
  imageLoad: number;
  /** `kind delete cluster`. */
  delete: number;
  /** Short reads: `kind get clusters`, `kubectl get nodes`, `docker image inspect`, versions. */
  quick: number;
  /** Extra time a command gets beyond the `--timeout` it was given, before we kill it. */
  grace: number;
  /** Pause between polls in bounded waits. */
  pollInterval: number;
}

/** Every bound follows DPLAB_TIMEOUT_FACTOR (TIMEOUTS already do); the pause between polls does not. */
export const PROVISION_TIMEOUTS: Readonly<ProvisionTimeouts> = {
  create: TIMEOUTS.provision,
  ciliumInstall: TIMEOUTS.long,
  rollout: TIMEOUTS.long,
  kubeProxyReplacement: 3 * 60_000 * TIMEOUT_FACTOR,
  imageLoad: TIMEOUTS.long,
  delete: 2 * 60_000 * TIMEOUT_FACTOR,
  quick: TIMEOUTS.quick,
  grace: 10_000 * TIMEOUT_FACTOR,
  pollInterval: 2_000,
};

export function resolveTimeouts(overrides?: Partial<ProvisionTimeouts>): ProvisionTimeouts {
  return { ...PROVISION_TIMEOUTS, ...overrides };
}

/** kubectl's `--timeout` wants whole seconds (at least 1). */
export function kubectlTimeoutFlag(ms: number): string {
  return `--timeout=${Math.max(1, Math.ceil(ms / 1000))}s`;
}
