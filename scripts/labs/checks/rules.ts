/**
 * "A node's rules for Service S are …" (syllabus I1, N1, V1, E2): dump the node's dataplane in
 * the mode's own format, parse it with the dataplane parsers into one model, and compare that
 * Service's ClusterIP frontend with what the step expects. The parser defaults to the dataplane
 * parsers (scripts/dataplane); tests may pass their own.
 */
import {
  findService,
  parse as parseDataplane,
  RULE_DUMPS,
  type DataplaneModel,
  type Format,
  type ParseOptions,
} from '../../dataplane/index.ts';
import { agentExec } from '../../catalogue/modes.ts';
import { z } from 'zod';
import { FORMATS } from '../../wire/formats.ts';
import { commandObservationSchema, gatherNodeCommand, observeCommand } from './command.ts';
import { fact, fail, pass } from './facts.ts';
import { firstItem, getByName, kubeListSchema } from './kube.ts';
import type { Check, EvalContext, GatherContext } from './types.ts';

export type ParseRules = (format: Format, text: string, opts?: ParseOptions) => DataplaneModel;

export interface RulesExpectation {
  /** Number of backends behind the Service's ClusterIP frontend (0 for "no rules", e.g. headless). */
  backends: number;
  /** Require equal shares (kube-proxy's random balancing with equal weights). */
  equalShares?: boolean;
}

export const rulesObservationSchema = z.object({
  format: z.enum(FORMATS),
  node: z.string(),
  dump: commandObservationSchema,
  services: kubeListSchema,
});
export type RulesObservation = z.infer<typeof rulesObservationSchema>;

async function gatherRules(ctx: GatherContext, service: string): Promise<RulesObservation> {
  const dump = RULE_DUMPS[ctx.mode];
  const [node] = await ctx.cluster.nodes({ signal: ctx.signal });
  const agent = dump.agent;
  const [out, services] = await Promise.all([
    agent
      ? observeCommand(() => ctx.cluster.kubectl(agentExec(agent, dump.command), { signal: ctx.signal }))
      : gatherNodeCommand(ctx, node, dump.command),
    getByName(ctx, 'services', service),
  ]);
  return { format: dump.format, node, dump: out, services };
}

function evaluateRules(service: string, want: RulesExpectation, parse: ParseRules, obs: RulesObservation, ctx: EvalContext) {
  const svc = firstItem(obs.services);
  const key = `${ctx.namespace}/${service}`;
  const clusterIP: string | undefined = svc?.spec?.clusterIP;
  if (obs.dump.exitCode !== 0)
    return fail(`Could not read the rules on ${obs.node} (exit code ${obs.dump.exitCode}).`, [
      fact(`${obs.format} on ${obs.node}`, 'readable', obs.dump.stderr.trim() || 'failed', false),
    ]);
  const names: Record<string, string> = {};
  for (const p of svc?.spec?.ports ?? []) if (clusterIP) names[`${clusterIP}:${p.port}`] = key;
  const model = parse(obs.format, obs.dump.stdout, { names });
  const frontends = (findService(model, key)?.frontends ?? []).filter((f) => f.type === 'ClusterIP');
  const backends = frontends[0]?.backends ?? [];
  const facts = [
    fact(
      `ClusterIP frontends for ${key} on ${obs.node}`,
      want.backends === 0 ? 'none' : 'at least 1',
      frontends.length,
      want.backends === 0 ? frontends.length === 0 : frontends.length > 0,
    ),
  ];
  if (want.backends > 0) facts.push(fact('backends', want.backends, backends.length));
  if (want.equalShares && backends.length) {
    const even = backends.every((b) => Math.abs(b.share - 1 / backends.length) < 1e-6);
    facts.push(
      fact(
        'shares',
        `equal (1/${backends.length} each)`,
        backends.map((b) => b.share.toFixed(3)),
        even,
      ),
    );
  }
  const wrong = facts.find((f) => !f.ok);
  if (wrong)
    return fail(
      `The ${obs.format} rules on ${obs.node} do not match yet: ${wrong.label} is ${wrong.seen}, expected ${wrong.expected}.`,
      facts,
      true,
    );
  return pass(
    `The ${obs.format} rules on ${obs.node} send ${key} to ${backends.length} backend${backends.length === 1 ? '' : 's'}.`,
    facts,
  );
}

export function serviceRules(service: string, want: RulesExpectation, parse: ParseRules = parseDataplane): Check<RulesObservation> {
  return {
    observations: rulesObservationSchema,
    gather: (ctx) => gatherRules(ctx, service),
    evaluate: (obs, ctx) => evaluateRules(service, want, parse, obs, ctx),
  };
}
