/**
 * scale-compare's checks: a recorded baseline, then growth of the node's dataplane after N
 * generated Services, with kube-proxy's sync time. The numbers go into the facts, so the page
 * shows them per mode, and into the verdict's figures, so the page can chart them across modes.
 */
import { kubeProxyMode } from '../../scripts/catalogue/modes.ts';
import { configMapValue, gatherConfigMap, type ConfigMapObservation } from '../../scripts/labs/checks/configmap.ts';
import { defineCheck, fact, fail, pass } from '../../scripts/labs/checks/index.ts';
import {
  ENTRY_COUNTS,
  entryCount,
  gatherScale,
  scaleFigures,
  scaleNode,
  syncTime,
  type ScaleObservation,
} from '../../scripts/labs/checks/scale.ts';
import { connectFigures, gatherConnect, parseConnectRun, summarise } from '../../scripts/labs/checks/connect-cost.ts';
import type { EvalContext, Fact, Figure, Verdict } from '../../scripts/labs/checks/types.ts';
import { z } from 'zod';
import { observationsOf, schemas } from '../../scripts/labs/checks/schemas.ts';

/** The label make-services.sh puts on every generated Service. */
const SCALE_LABEL = 'dplab-scale=yes';
/** A recorded baseline may differ this much from a fresh count (a pod restarting, a Service of the system). */
const BASELINE_SLACK = 50;

function countFacts(obs: ScaleObservation, ctx: EvalContext, baseline?: number): { now: number | null; facts: Fact[] } {
  const now = entryCount(obs);
  const what = ENTRY_COUNTS[ctx.mode].what;
  const facts = [
    fact(
      `${what} on ${obs.node}`,
      baseline === undefined ? 'a number' : `baseline ${baseline} + growth`,
      now ?? `unreadable (exit code ${obs.count.exitCode}: ${obs.count.stderr.trim()})`,
      now !== null,
    ),
  ];
  return { now, facts };
}

function syncFacts(obs: ScaleObservation, ctx: EvalContext): Fact[] {
  if (!kubeProxyMode(ctx.mode))
    return [fact('kube-proxy sync time', 'none: no kube-proxy on Cilium', 'n/a (the agent updates eBPF map entries per Service)', true)];
  const s = syncTime(obs.syncMetrics);
  if (!s) return [fact('kube-proxy sync time (kubeproxy_sync_proxy_rules_duration_seconds)', 'any', 'not available', true)];
  return [
    fact('kube-proxy syncs so far', 'any', s.syncs, true),
    fact('kube-proxy sync time, average', 'any', `${s.averageMs.toFixed(1)} ms`, true),
    fact('kube-proxy sync time, 90th percentile bucket', 'any', s.p90Ms === null ? 'above the largest bucket' : `≤ ${s.p90Ms} ms`, true),
  ];
}

/** The verdict with the measurement attached, when there is one. */
function measured(verdict: Verdict, figures: Record<string, Figure> | undefined): Verdict {
  return figures ? { ...verdict, figures } : verdict;
}

function baselineOf(answer: ConfigMapObservation): number | undefined {
  const v = configMapValue(answer, 'baseline');
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
}

export const baselineCheck = defineCheck({
  observations: observationsOf({ scale: schemas.scale, answer: schemas.configMap }),
  async gather(ctx) {
    const [scale, answer] = await Promise.all([gatherScale(ctx), gatherConfigMap(ctx, 'scale')]);
    return { scale, answer };
  },
  evaluate(obs, ctx) {
    const { now, facts } = countFacts(obs.scale, ctx);
    if (now === null) return fail(`Could not count the dataplane entries on ${obs.scale.node}.`, facts);
    const raw = configMapValue(obs.answer, 'baseline');
    const baseline = baselineOf(obs.answer);
    facts.push(
      fact(
        'your baseline (ConfigMap scale, key baseline)',
        `about ${now}`,
        raw ?? 'not recorded',
        baseline !== undefined && Math.abs(baseline - now) <= BASELINE_SLACK,
      ),
    );
    if (raw === undefined)
      return fail(
        `Record the baseline first: ConfigMap \`scale\` in \`${ctx.namespace}\`, key \`baseline\`, with the number count.sh prints (now ${now}).`,
        facts,
      );
    if (baseline === undefined) return fail(`The baseline must be a plain number; ConfigMap \`scale\` says "${raw}".`, facts);
    if (!facts[1].ok)
      return fail(
        `Your baseline ${baseline} is far from what ${obs.scale.node} shows now (${now}). Measure again before creating Services.`,
        facts,
      );
    // Only a passing baseline is a point at 0 Services: this step does not count the generated ones.
    return measured(
      pass(`Baseline recorded: ${baseline} ${ENTRY_COUNTS[ctx.mode].what} on ${obs.scale.node} before any generated Service.`, [
        ...facts,
        ...syncFacts(obs.scale, ctx),
      ]),
      scaleFigures(obs.scale, ctx.mode, 0),
    );
  },
});

const growthObservationSchema = observationsOf({
  scale: schemas.scale,
  answer: schemas.configMap,
  /** How many Services carry the generator's label (`kubectl get services -l … -o name`, counted). */
  services: z.number(),
});
export type GrowthObservation = z.infer<typeof growthObservationSchema>;

export function growthCheck(n: number) {
  return defineCheck({
    observations: growthObservationSchema,
    settleMs: 180_000,
    async gather(ctx) {
      const [scale, answer, names] = await Promise.all([
        gatherScale(ctx),
        gatherConfigMap(ctx, 'scale'),
        ctx.cluster.kubectl(['get', 'services', '-n', ctx.namespace, '-l', SCALE_LABEL, '-o', 'name'], { signal: ctx.signal }),
      ]);
      return { scale, answer, services: names.stdout.split('\n').filter((l) => l.trim()).length };
    },
    evaluate(obs, ctx): Verdict {
      // Any readable count is a true point (Services, entries), passing or not.
      return measured(growthVerdict(n, obs, ctx), scaleFigures(obs.scale, ctx.mode, obs.services));
    },
  });
}

function growthVerdict(n: number, obs: GrowthObservation, ctx: EvalContext): Verdict {
  const baseline = baselineOf(obs.answer);
  const { now, facts } = countFacts(obs.scale, ctx, baseline);
  facts.unshift(fact(`Services labelled ${SCALE_LABEL}`, `at least ${n}`, obs.services, obs.services >= n));
  if (baseline === undefined)
    return fail('There is no baseline to compare with: record it first (step 1, ConfigMap `scale`, key `baseline`).', facts);
  if (obs.services < n)
    return fail(`${obs.services} generated Services exist; this step needs ${n}. Run \`sh scale-compare/make-services.sh ${n}\`.`, facts);
  if (now === null) return fail(`Could not count the dataplane entries on ${obs.scale.node}.`, facts);
  const growth = now - baseline;
  facts.push(
    fact('growth over the baseline', `at least ${n}`, growth, growth >= n),
    fact('entries per generated Service', 'any', (growth / Math.max(obs.services, 1)).toFixed(1), true),
    ...syncFacts(obs.scale, ctx),
  );
  if (growth < n)
    return fail(
      `The dataplane on ${obs.scale.node} grew by ${growth}, less than ${n}: it may still be catching up with the new Services.`,
      facts,
      true,
    );
  const per = (growth / obs.services).toFixed(1);
  return pass(
    `${obs.services} Services added ${growth} ${ENTRY_COUNTS[ctx.mode].what} on ${obs.scale.node} (${per} per Service, ${baseline} → ${now}).`,
    facts,
  );
}

/**
 * Clean-up, checked: the generated Services are gone and the node's dataplane is back near the
 * baseline, so the later labs' greps and counts see only their own Services. In large cluster
 * mode kube-proxy deletes stale chains only on a sync at least its sync period (30 s) after the last
 * clean-up (pkg/proxy/iptables/proxier.go, v1.35.0), so the count may lag: pending.
 */
export const cleanupCheck = defineCheck<GrowthObservation>({
  observations: growthObservationSchema,
  settleMs: 180_000,
  gather: (ctx) => growthCheck(0).gather(ctx),
  evaluate(obs, ctx): Verdict {
    const baseline = baselineOf(obs.answer);
    const { now, facts } = countFacts(obs.scale, ctx, baseline);
    facts.unshift(fact(`Services labelled ${SCALE_LABEL}`, 0, obs.services, obs.services === 0));
    if (obs.services > 0)
      return fail(
        `${obs.services} generated Services are still there. Delete them: \`kubectl -n ${ctx.namespace} delete services -l ${SCALE_LABEL}\`.`,
        facts,
      );
    if (now === null) return fail(`Could not count the dataplane entries on ${obs.scale.node}.`, facts);
    if (baseline !== undefined) {
      const left = now - baseline;
      facts.push(fact('entries over the baseline', `at most ${BASELINE_SLACK}`, left, left <= BASELINE_SLACK));
      if (left > BASELINE_SLACK)
        return fail(
          `The Services are gone but ${obs.scale.node} still has ${left} entries over the baseline: in large cluster mode kube-proxy removes stale chains on a sync at least 30 s after its last clean-up.`,
          facts,
          true,
        );
    }
    return measured(
      pass(
        `The generated Services are gone; ${obs.scale.node} is back to ${now} ${ENTRY_COUNTS[ctx.mode].what}${baseline === undefined ? '' : ` (baseline ${baseline})`}.`,
        facts,
      ),
      scaleFigures(obs.scale, ctx.mode, 0),
    );
  },
});

/** The ConfigMap and key the learner records their median in (a ConfigMap of its own: `scale` keeps the baseline). */
export const CONNECT_ANSWER = { configMap: 'connect', key: 'medianUs' } as const;
/** The check's own measurement: fewer samples than the script's 400, enough for a median to compare with. */
const CHECK_SAMPLES = 200;
const CHECK_WARM_UP = 20;
/** How far a learner's median may sit from the check's own, taken a moment later on the same node. */
const CONNECT_FACTOR = 4;
const CONNECT_SLACK_US = 300;

const connectObservationsSchema = observationsOf({
  scale: schemas.scale,
  answer: schemas.configMap,
  services: z.number(),
  /** The check's own run of connect-cost.sh on the first worker. */
  connect: schemas.connect,
});
type ConnectObservations = z.infer<typeof connectObservationsSchema>;

const us = (n: number) => `${Math.round(n).toLocaleString('en')} µs`;

/**
 * After 1,000 Services: the learner timed new connections with connect-cost.sh and recorded the
 * median; the check times them too (so the page charts a figure it saw) and shows, on iptables,
 * how many KUBE-SERVICES rules stood ahead of the Service's own.
 */
export function connectCheck(n: number, script: string) {
  return defineCheck({
    observations: connectObservationsSchema,
    async gather(ctx) {
      const [scale, answer, names, node] = await Promise.all([
        gatherScale(ctx),
        gatherConfigMap(ctx, CONNECT_ANSWER.configMap),
        ctx.cluster.kubectl(['get', 'services', '-n', ctx.namespace, '-l', SCALE_LABEL, '-o', 'name'], { signal: ctx.signal }),
        scaleNode(ctx),
      ]);
      // As connect-cost.sh chooses off iptables: web where there is one, else the first generated Service.
      const address = (name: string) =>
        ctx.cluster
          .kubectl(['get', 'service', name, '-n', ctx.namespace, '-o', 'jsonpath={.spec.clusterIP} {.spec.ports[0].port}'], {
            signal: ctx.signal,
          })
          .then((r) => `${ctx.namespace}/${name} ${r.stdout.trim()}`)
          .catch(() => undefined);
      const target = (await address('web')) ?? (await address('scale-1')) ?? `${ctx.namespace}/scale-1 0.0.0.0 80`;
      const connect = await gatherConnect(ctx, node, {
        script,
        namespace: ctx.namespace,
        target,
        samples: CHECK_SAMPLES,
        warmUp: CHECK_WARM_UP,
      });
      return { scale, answer, services: names.stdout.split('\n').filter((l) => l.trim()).length, connect };
    },
    evaluate(obs, ctx): Verdict {
      const run = parseConnectRun(obs.connect.run.stdout);
      const figures = scaleFigures(obs.scale, ctx.mode, obs.services);
      return measured(connectVerdict(n, obs), figures && { ...figures, ...connectFigures(run) });
    },
  });
}

function connectVerdict(n: number, obs: ConnectObservations): Verdict {
  const facts: Fact[] = [fact(`Services labelled ${SCALE_LABEL}`, `at least ${n}`, obs.services, obs.services >= n)];
  if (obs.services < n)
    return fail(
      `${obs.services} generated Services exist; time the connections at ${n}: \`sh scale-compare/make-services.sh ${n}\` first.`,
      facts,
    );
  const run = parseConnectRun(obs.connect.run.stdout);
  const s = run && summarise(run.samples);
  if (!run || !s)
    return fail(
      `Could not time connections on ${obs.connect.node}: ${obs.connect.run.stderr.trim() || `no connection succeeded (exit code ${obs.connect.run.exitCode})`}.`,
      facts,
    );
  const where = `${run.target.name} (${run.target.ip}:${run.target.port})`;
  facts.push(
    fact(`new TCP connections from ${obs.connect.node} to ${where}, timed by the check`, 'at least 100', s.samples, s.samples >= 100),
    fact('connect time, median (the check)', 'any', us(s.medianUs), true),
    fact('connect time, 90th percentile (the check)', 'any', us(s.p90Us), true),
  );
  if (run.position)
    facts.push(
      fact(
        'KUBE-SERVICES rules ahead of its rule (before, after timing)',
        'any',
        `${run.position.ahead}, ${run.position.aheadAfter ?? '?'} of ${run.position.total}`,
        true,
      ),
    );
  const raw = configMapValue(obs.answer, CONNECT_ANSWER.key);
  const mine = raw !== undefined && /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : undefined;
  const near = mine !== undefined && mine >= s.medianUs / CONNECT_FACTOR && mine <= s.medianUs * CONNECT_FACTOR + CONNECT_SLACK_US;
  const answerLabel = `your median (ConfigMap ${CONNECT_ANSWER.configMap}, key ${CONNECT_ANSWER.key})`;
  facts.push(fact(answerLabel, `near ${us(s.medianUs)}`, raw === undefined ? 'not recorded' : `${raw} µs`, near));
  if (raw === undefined)
    return fail(
      `Time the connections with \`bash scale-compare/connect-cost.sh\` and record the median: ConfigMap \`${CONNECT_ANSWER.configMap}\`, key \`${CONNECT_ANSWER.key}\` (the check measured ${us(s.medianUs)}).`,
      facts,
    );
  if (mine === undefined) return fail(`The median must be a plain number of microseconds; ConfigMap \`connect\` says "${raw}".`, facts);
  if (!near)
    return fail(
      `Your median ${us(mine)} is far from the ${us(s.medianUs)} the check measured just now on ${obs.connect.node}: time again (\`bash scale-compare/connect-cost.sh\`) and record that.`,
      facts,
    );
  const ahead = run.position ? `, with ${run.position.ahead.toLocaleString('en')} KUBE-SERVICES rules ahead of its rule` : '';
  return pass(
    `A new connection from ${obs.connect.node} to ${run.target.name} takes ${us(s.medianUs)} (median of ${s.samples}, p90 ${us(s.p90Us)})${ahead}; you measured ${us(mine)}.`,
    facts,
  );
}
