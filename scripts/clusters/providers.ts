/**
 * Which provider a mode's cluster has: `DPLAB_PROVIDER` (set by `--provider`) when given, else
 * `sim` when a sim cluster of that mode exists in the state folder, else `kind`. So `dplab up
 * iptables --provider sim` in one process and `dplab check …` in another agree without flags.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DplabError } from '../base/errors.ts';
import { kindProvider } from './kind-provider.ts';
import { simStateDir } from '../sim/layout.ts';
import { simProvider, useSimBinaries } from './sim-provider.ts';
import type { Mode } from '../catalogue/modes.ts';
import type { ClusterProvider } from './provider.ts';
import { isProviderId, PROVIDERS, type ProviderId } from '../catalogue/provider-ids.ts';
import type { ClusterHandle } from './handle.ts';

function providerById(id: ProviderId): ClusterProvider {
  if (id === 'kind') return kindProvider;
  // Checks, status and the lab terminals run `kubectl`: the one built with the components.
  useSimBinaries();
  return simProvider;
}

/** The provider the user asked for (`--provider` / DPLAB_PROVIDER), or undefined. */
export function requestedProvider(): ProviderId | undefined {
  const v = process.env.DPLAB_PROVIDER;
  if (v === undefined || v === '') return undefined;
  if (!isProviderId(v))
    throw new DplabError(`DPLAB_PROVIDER="${v}" is not a cluster provider.`, { fix: `Use one of: ${PROVIDERS.join(', ')}.`, status: 400 });
  return v;
}

export function providerFor(mode: Mode): ClusterProvider {
  const asked = requestedProvider();
  if (asked) return providerById(asked);
  return providerById(existsSync(join(simStateDir(mode), 'cluster.json')) ? 'sim' : 'kind');
}

/** The handle of the mode's cluster, whichever provider made it (see providers.ts). */
export function clusterHandle(mode: Mode): ClusterHandle {
  return providerFor(mode).handle(mode);
}
