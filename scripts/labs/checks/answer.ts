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
import type { Snippet } from '../schema.ts';

export { gatherConfigMap as gatherAnswer };

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

/**
 * The shell variable a recorded value is named by: the key in lower case, words joined by `_`
 * (`mode`, `with_pod`, `kube_proxy_replacement`). Lower case keeps clear of bash's own
 * variables (`SECONDS` counts up by itself).
 */
function answerVariable(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_');
}

/** `mode="<mode>"`: one value named on a line of its own, typed by the learner or computed by a solution. */
export function nameAnswer(key: string, value: string): string {
  return `${answerVariable(key)}="${value}"`;
}

/**
 * The command that stores the values named before it (`mode="…"`) under `keys` in `configMap`,
 * safe to run twice (built on the client, then applied): one option a line, so a learner can read it.
 */
export function recordCommand(namespace: string, configMap: string, keys: readonly string[]): string {
  return [
    `kubectl -n ${namespace} create configmap ${configMap} \\`,
    ...keys.map((k) => `  --from-literal=${k}="$${answerVariable(k)}" \\`),
    '  --dry-run=client -o yaml | kubectl apply -f -',
  ].join('\n');
}

/** A solution's recording, in named steps: each value computed into its variable, then the command that stores them. */
export function recordSteps(namespace: string, configMap: string, pairs: Record<string, string>): string[] {
  return [...Object.entries(pairs).map(([k, v]) => nameAnswer(k, v)), recordCommand(namespace, configMap, Object.keys(pairs))];
}

/**
 * The snippets that record an answer, in named steps: one per value, holding its placeholder
 * (`mode="<mode>"`, which the page types without Enter for the learner to finish), then the
 * command that stores them, labelled `label`.
 */
export function recordSnippets(
  namespace: string,
  configMap: string,
  placeholders: Record<string, string>,
  label: string,
  modes?: Snippet['modes'],
): Snippet[] {
  const only = modes ? { modes } : {};
  return [
    ...Object.entries(placeholders).map(([k, v]) => ({
      label: `Your answer for ${k}`,
      command: nameAnswer(k, v),
      ...only,
    })),
    { label, command: recordCommand(namespace, configMap, Object.keys(placeholders)), ...only },
  ];
}

/** Words split on commas and whitespace, sorted: for answers that are sets ("10.0.0.1:80, 10.0.0.2:80"). */
function wordSet(text: string): string[] {
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
