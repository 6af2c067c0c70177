/** How long each provisioning step may take. Tests pass small values; people get these. */
import { TIMEOUTS } from '../base/exec.ts';

export interface ProvisionTimeouts {
  /** `kind create cluster`, which pulls the node image on first use. */
  create: number;
  /** `cilium install` / `helm upgrade --install` (the chart and its images). */
  ciliumInstall: number;
  /** Nodes Ready; DaemonSet and Deployment rollouts (each). */
  rollout: number;
  /** Cilium reporting `KubeProxyReplacement: True` after its DaemonSet is ready. */
  kubeProxyReplacement: number;
  /** `kind load docker-image`, per image. */
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

export const PROVISION_TIMEOUTS: Readonly<ProvisionTimeouts> = {
  create: TIMEOUTS.provision,
  ciliumInstall: TIMEOUTS.long,
  rollout: TIMEOUTS.long,
  kubeProxyReplacement: 3 * 60_000,
  imageLoad: TIMEOUTS.long,
  delete: 2 * 60_000,
  quick: TIMEOUTS.quick,
  grace: 10_000,
  pollInterval: 2_000,
};

export function resolveTimeouts(overrides?: Partial<ProvisionTimeouts>): ProvisionTimeouts {
  return { ...PROVISION_TIMEOUTS, ...overrides };
}

/** kubectl's `--timeout` wants whole seconds (at least 1). */
export function kubectlTimeoutFlag(ms: number): string {
  return `--timeout=${Math.max(1, Math.ceil(ms / 1000))}s`;
}

/** Every bound multiplied by `factor` (the pause between polls stays); 1 returns them as they are. */
export function scaleTimeouts(timeouts: ProvisionTimeouts, factor: number): ProvisionTimeouts {
  if (factor === 1) return timeouts;
  const scaled = { ...timeouts };
  for (const key of Object.keys(scaled) as (keyof ProvisionTimeouts)[])
    if (key !== 'pollInterval') scaled[key] = Math.round(scaled[key] * factor);
  return scaled;
}
