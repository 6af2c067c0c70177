/**
 * "The learner wrote down what they found": a key in a ConfigMap of the lab namespace, compared
 * with what the check itself reads from the cluster. Labs about reading a node (which chain,
 * which scheduler, which probability) have nothing else to observe; the answer is the evidence
 * that the learner looked, and the fact shows the truth next to it.
 */
import { configMapValue, gatherConfigMap, type ConfigMapObservation } from './configmap.ts';
import { fact, fail, pass } from './facts.ts';
import { firstItem } from './kube.ts';
import type { EvalContext, Fact, Verdict } from './types.ts';

export { gatherConfigMap as gatherAnswer, type ConfigMapObservation as AnswerObservation };

export interface AnswerExpectation {
  /** ConfigMap name, e.g. `web-chain`. */
  configMap: string;
  key: string;
  /** What the cluster shows, as the learner should have written it. */
  truth: string;
  /** Words for the fact label ("the chain web's ClusterIP jumps to"). */
  what: string;
  /** Compare leniently (default: trimmed, exact). */
  same?: (answer: string, truth: string) => boolean;
}

/** The command that records `value` under `key`, safe to run twice. */
export function recordCommand(namespace: string, configMap: string, pairs: Record<string, string>): string {
  const literals = Object.entries(pairs)
    .map(([k, v]) => `--from-literal=${k}="${v}"`)
    .join(' ');
  return `kubectl -n ${namespace} create configmap ${configMap} ${literals} --dry-run=client -o yaml | kubectl apply -f -`;
}

/** Words split on commas and whitespace, sorted: for answers that are sets ("10.0.0.1:80, 10.0.0.2:80"). */
export function wordSet(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).filter(Boolean))].sort();
}

export function sameSet(a: string, b: string): boolean {
  return wordSet(a).join(' ') === wordSet(b).join(' ');
}

/** Fail (answer missing or wrong) or pass, with the truth beside the answer. */
export function evaluateAnswer(want: AnswerExpectation, obs: ConfigMapObservation, ctx: EvalContext): Verdict {
  const label = `${want.what} (ConfigMap ${want.configMap}, key ${want.key})`;
  if (!firstItem(obs.configmaps)) {
    return fail(
      `Write down what you found: create a ConfigMap \`${want.configMap}\` in \`${ctx.namespace}\` with the key \`${want.key}\`.`,
      [fact(label, want.truth, 'not recorded yet', false)],
    );
  }
  const answer = configMapValue(obs, want.key);
  if (answer === undefined) {
    return fail(`ConfigMap \`${want.configMap}\` has no key \`${want.key}\` yet.`, [
      fact(label, want.truth, `key ${want.key} missing`, false),
    ]);
  }
  const ok = (want.same ?? ((a, t) => a.trim() === t.trim()))(answer, want.truth);
  const f = fact(label, want.truth, answer, ok);
  return ok
    ? pass(`You recorded ${want.what}: ${answer}.`, [f])
    : fail(`You recorded ${answer || '(nothing)'} as ${want.what}, but the node shows ${want.truth}.`, [f]);
}

/**
 * Several keys of one ConfigMap: a missing ConfigMap names every key at once; otherwise the first
 * wrong key fails (with the facts of the keys before it), and a pass carries every key's fact.
 */
export function evaluateAnswers(
  configMap: string,
  wants: ReadonlyArray<Omit<AnswerExpectation, 'configMap'>>,
  obs: ConfigMapObservation,
  ctx: EvalContext,
): Verdict {
  if (!firstItem(obs.configmaps)) {
    const keys = wants.map((w) => `\`${w.key}\``);
    return fail(
      `Write down what you found: create a ConfigMap \`${configMap}\` in \`${ctx.namespace}\` with the key${keys.length > 1 ? 's' : ''} ${keys.join(' and ')}.`,
      wants.map((w) => fact(`${w.what} (ConfigMap ${configMap}, key ${w.key})`, w.truth, 'not recorded yet', false)),
    );
  }
  const facts: Fact[] = [];
  for (const w of wants) {
    const v = evaluateAnswer({ configMap, ...w }, obs, ctx);
    if (v.status === 'fail') return { ...v, facts: [...facts, ...v.facts] };
    facts.push(...v.facts);
  }
  return pass(`You recorded ${wants.map((w) => w.what).join(' and ')}.`, facts);
}
