/**
 * A step replayed from its recordings, for a machine where no cluster can start: the solution's
 * commands, what the real cluster printed where the recording kept it, and what Check said on
 * the unsolved and the solved recording (the step's own evaluate, run on them now). Only
 * recordings are replayed: a hand-written file is not what a cluster printed.
 */
import type { Mode } from '../catalogue/modes.ts';
import { DplabError } from '../base/errors.ts';
import type { RecordedOutput, RecordingSource, ReplayedCheck, StepReplay } from '../wire/replay.ts';
import { findObservationFiles, readObservationFile, type ObservationFile, type StepState } from './observations.ts';
import { solutionFor, type Lab, type Step } from './schema.ts';

/**
 * A node's whole rule dump is ~230 lines (its KUBE-* chains come after the mangle and filter
 * tables, so a head would miss them); the page scrolls it in its own box. Past this, the rest is counted.
 */
export const OUTPUT_MAX_LINES = 400;

export function replayStep(lab: Lab, step: Step, mode: Mode): StepReplay {
  const unsolved = replayState(lab, step, mode, 'unsolved');
  const solved = replayState(lab, step, mode, 'solved');
  return {
    lab: lab.id,
    step: step.id,
    mode,
    commands: solutionFor(step, mode),
    outputs: recordedOutputs(solved.observations),
    unsolved: unsolved.check,
    solved: solved.check,
  };
}

function replayState(lab: Lab, step: Step, mode: Mode, state: StepState): { check: ReplayedCheck; observations: unknown } {
  const recorded = findObservationFiles(lab.id, step.id, state, mode)
    .map((path) => readObservationFile(path, path, step.check.observations))
    .find((f) => f.source.kind === 'recorded');
  if (!recorded)
    throw new DplabError(`${lab.id}/${step.id} has no ${state} recording on ${mode} to replay.`, {
      fix: `Record one with \`dplab verify-labs --lab ${lab.id} --mode ${mode} --record\` on a machine with Docker.`,
      status: 404,
    });
  const verdict = step.check.evaluate(recorded.observations, { mode, namespace: lab.namespace });
  return {
    check: { status: verdict.status, message: verdict.message, facts: verdict.facts, source: sourceOf(recorded.source) },
    observations: recorded.observations,
  };
}

type Recorded = Extract<ObservationFile['source'], { kind: 'recorded' }>;

/** `kind v0.31.0 · Kubernetes v1.35.0 · kernel 6.18.44-fc-v1045 · 2 Dec 2026` (the sim: its kube-proxy instead of kind). */
function sourceOf(source: ObservationFile['source']): RecordingSource {
  const s = source as Recorded;
  const components = s.components ?? {};
  const where =
    s.provider === 'kind'
      ? (s.kindVersion?.match(/^kind v\S+/)?.[0] ?? `kind ${s.kindVersion ?? ''}`.trim())
      : `dplab's simulated cluster (real kube-proxy ${components['kube-proxy'] ?? s.kubernetesVersion} on network-namespace nodes)`;
  const date = new Date(s.date);
  const day = Number.isNaN(date.getTime())
    ? s.date
    : date.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });
  const parts = [where, `Kubernetes ${s.kubernetesVersion}`, ...(components.kernel ? [`kernel ${components.kernel}`] : []), day];
  return { provider: s.provider, label: parts.join(' · '), date: s.date, kubernetesVersion: s.kubernetesVersion, components };
}

/**
 * Every command result the recording kept (`{ exitCode, stdout, stderr }`: curl's answers from
 * the client pod, a node's rule dump), labelled by where it sits and the node it ran on.
 */
export function recordedOutputs(observations: unknown): RecordedOutput[] {
  const out: RecordedOutput[] = [];
  const walk = (value: unknown, path: string[], at: { node?: string; format?: string }): void => {
    if (Array.isArray(value)) return value.forEach((v, i) => walk(v, [...path, String(i)], at));
    if (!value || typeof value !== 'object') return;
    const o = value as Record<string, unknown>;
    const here = {
      node: typeof o.node === 'string' ? o.node : at.node,
      format: typeof o.format === 'string' ? o.format : at.format,
    };
    if (typeof o.stdout === 'string' && typeof o.exitCode === 'number') {
      const text = [o.stdout, typeof o.stderr === 'string' ? o.stderr : '']
        .filter((t) => t.trim())
        .join('\n')
        .trimEnd();
      const what = here.format ? `\`${here.format}\`` : `Output kept as \`${path.join('.')}\``;
      if (text) out.push(clip(`${what}${here.node ? ` on ${here.node}` : ''}`, text));
      return;
    }
    for (const [k, v] of Object.entries(o)) walk(v, [...path, k], here);
  };
  walk(observations, [], {});
  return out;
}

function clip(label: string, text: string): RecordedOutput {
  const lines = text.split('\n');
  return { label, text: lines.slice(0, OUTPUT_MAX_LINES).join('\n'), omittedLines: Math.max(0, lines.length - OUTPUT_MAX_LINES) };
}
