/**
 * The one place a mode's cluster provider is chosen, once: `ClusterProviders`. It is `DPLAB_PROVIDER`
 * (set by `--provider`) when given, else `sim` for a mode whose sim cluster exists in the state
 * folder, else `kind`; decided for every mode when the process first asks (the runner's start, a
 * command's), so `dplab up iptables --provider sim` in one process and `dplab check …` in another
 * agree without flags. After that nothing looks at the sim's folder again and nothing changes the
 * runner's PATH: a handle carries its provider's programs (`pathFirst`) to what runs against it.
 */
import { DplabError } from '../base/errors.ts';
import { kindProvider } from './kind-provider.ts';
import { simClusterExists, simProvider } from './sim-provider.ts';
import { MODES, type Mode } from '../catalogue/modes.ts';
import type { ClusterProvider } from './provider.ts';
import { isProviderId, PROVIDERS, type ProviderId } from '../catalogue/provider-ids.ts';
import type { ClusterHandle } from './handle.ts';

const BY_ID: Record<ProviderId, ClusterProvider> = { kind: kindProvider, sim: simProvider };

/** The provider the user asked for (`--provider` / DPLAB_PROVIDER), or undefined. */
function requestedProvider(env: NodeJS.ProcessEnv): ProviderId | undefined {
  const v = env.DPLAB_PROVIDER;
  if (v === undefined || v === '') return undefined;
  if (!isProviderId(v))
    throw new DplabError(`DPLAB_PROVIDER="${v}" is not a cluster provider.`, { fix: `Use one of: ${PROVIDERS.join(', ')}.`, status: 400 });
  return v;
}

/** What the choice depends on: what the user asked for, and which modes have a sim cluster here. */
export interface ProviderChoice {
  /** `--provider` / DPLAB_PROVIDER, when given. */
  requested?: ProviderId;
  /** Asked once per mode, when the choice is made, and only when nothing was requested. */
  simClusterExists(mode: Mode): boolean;
  /** The providers by id (tests pass their own). */
  byId?: Record<ProviderId, ClusterProvider>;
}

/** The choice of this process: DPLAB_PROVIDER (an unknown value is an error), and the sim's state folder. */
function processChoice(): ProviderChoice {
  return { requested: requestedProvider(process.env), simClusterExists };
}

/** Each mode's provider, chosen once, and the handle of each mode's cluster from it. */
export class ClusterProviders {
  /** What the user asked for (`--provider`), which every mode then has. */
  readonly requested: ProviderId | undefined;
  readonly #byId: Record<ProviderId, ClusterProvider>;
  readonly #chosen: Map<Mode, ClusterProvider>;

  constructor(choice: ProviderChoice = processChoice()) {
    this.requested = choice.requested;
    this.#byId = choice.byId ?? BY_ID;
    const pick = (mode: Mode): ProviderId => choice.requested ?? (choice.simClusterExists(mode) ? 'sim' : 'kind');
    this.#chosen = new Map(MODES.map((mode) => [mode, this.#byId[pick(mode)]]));
  }

  provider(mode: Mode): ClusterProvider {
    return this.#chosen.get(mode)!;
  }

  /**
   * The handle of the mode's cluster, from the provider chosen for it. A handle is a few closures
   * that read the state folder's paths when made (kept by those who hold one), so each ask makes one.
   */
  handle(mode: Mode): ClusterHandle {
    return this.provider(mode).handle(mode);
  }

  /**
   * The mode's cluster was deleted: its next one is the requested provider's, else kind's (a sim
   * cluster is made only when asked for), without looking at the sim's folder again.
   */
  deleted(mode: Mode): void {
    this.#chosen.set(mode, this.#byId[this.requested ?? 'kind']);
  }
}

let shared: ClusterProviders | undefined;

/** This process's providers, chosen when first asked for: the runner, its cluster manager and every command share them. */
export function clusterProviders(): ClusterProviders {
  shared ??= new ClusterProviders();
  return shared;
}

/** The handle of the mode's cluster, from this process's providers (see ClusterProviders). */
export function clusterHandle(mode: Mode): ClusterHandle {
  return clusterProviders().handle(mode);
}
