// How each dataplane's balancing figures become one comparable number: the chance that a new
// connection picks a backend.

/**
 * iptables tries rules in order; rule i matches with probability p_i (null = always).
 * Its effective share is p_i times the chance every earlier rule missed. If the last rule
 * is probabilistic too, some connections match nothing; shares are renormalised over the
 * ones that reach a backend.
 */
export function chainedShares(probabilities: Array<number | null>): number[] {
  let missedSoFar = 1;
  const raw = probabilities.map((p) => {
    const hit = missedSoFar * (p ?? 1);
    missedSoFar -= hit;
    return hit;
  });
  return normalise(raw);
}

/** IPVS weights: weight / sum of weights; an all-zero set gets no new connections anywhere. */
export function weightedShares(weights: number[]): number[] {
  return normalise(weights);
}

/** numgen, Cilium random: every backend equally likely. */
export function equalShares(count: number): number[] {
  return Array.from({ length: count }, () => 1 / count);
}

function normalise(values: number[]): number[] {
  const total = values.reduce((a, b) => a + b, 0);
  if (!(total > 0)) return values.map(() => 0);
  return values.map((v) => v / total);
}

/** The chain of probabilities kube-proxy writes for n endpoints: 1/n, 1/(n-1), … , then none. */
export function kubeProxyProbabilities(n: number): Array<number | null> {
  return Array.from({ length: n }, (_, i) => (i < n - 1 ? 1 / (n - i) : null));
}

/**
 * xt_statistic keeps the probability as a 31-bit fraction and iptables-save prints it with
 * 11 decimals, so 1/3 comes back as 0.33333333349. Reproduced here for writers and tests.
 */
export function iptablesSavedProbability(p: number): string {
  const FRACTION_ONE = 0x80000000;
  return (Math.round(p * FRACTION_ONE) / FRACTION_ONE).toFixed(11);
}
