/**
 * The cluster providers, by name: how a `dplab-<mode>` cluster comes to exist (`kind`: Docker +
 * kind, the product's path; `sim`: real control plane and kube-proxy on network-namespace nodes).
 * Plain data: the seam itself is `ClusterProvider` in scripts/clusters/provider.ts.
 */
export const PROVIDERS = ['kind', 'sim'] as const;
export type ProviderId = (typeof PROVIDERS)[number];

export function isProviderId(v: unknown): v is ProviderId {
  return typeof v === 'string' && (PROVIDERS as readonly string[]).includes(v);
}
