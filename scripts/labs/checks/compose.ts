/**
 * Composition: a step that needs several things true (a Service with the right spec AND its
 * endpoints ready) combines library checks instead of re-implementing them.
 */
import { z } from 'zod';
import type { Check, EvalContext, GatherContext, ObservationSchema, Verdict } from './types.ts';

type Observed<C> = { [K in keyof C]: C[K] extends Check<infer O> ? O : never };

/** Gather all parts in parallel; pass when every part passes. The first failing part's message leads. */
// `any`: a check is contravariant in what evaluate reads, so no other type admits every part.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function allOf<C extends Record<string, Check<any>>>(parts: C): Check<Observed<C>> {
  const keys = Object.keys(parts) as (keyof C & string)[];
  // The object of the parts' schemas has exactly the parts' observations, which TS cannot follow through fromEntries.
  const observations = z.object(Object.fromEntries(keys.map((k) => [k, parts[k].observations]))) as unknown as ObservationSchema<
    Observed<C>
  >;
  return {
    observations,
    settleMs: Math.max(0, ...keys.map((k) => parts[k].settleMs ?? 0)) || undefined,
    async gather(ctx: GatherContext) {
      const values = await Promise.all(keys.map((k) => parts[k].gather(ctx)));
      return Object.fromEntries(keys.map((k, i) => [k, values[i]])) as Observed<C>;
    },
    evaluate(obs: Observed<C>, ctx: EvalContext): Verdict {
      const verdicts = keys.map((k) => parts[k].evaluate(obs[k], ctx));
      const facts = verdicts.flatMap((v) => v.facts);
      const failed = verdicts.filter((v) => v.status === 'fail');
      if (failed.length === 0) return { status: 'pass', message: verdicts.map((v) => v.message).join(' '), facts };
      const settled = failed.find((v) => !v.pending);
      const lead = settled ?? failed[0];
      return settled ? { status: 'fail', message: lead.message, facts } : { status: 'fail', message: lead.message, facts, pending: true };
    },
  };
}

/** A check written inline in a lab, typed by its observations' schema (gather must return that shape). */
export function defineCheck<O>(check: { observations: ObservationSchema<O> } & Omit<Check<NoInfer<O>>, 'observations'>): Check<O> {
  return check;
}

/** The observations of several library checks side by side, as one schema (`{ rules: …, answer: … }`). */
export const observationsOf = <S extends z.ZodRawShape>(shape: S) => z.object(shape);
