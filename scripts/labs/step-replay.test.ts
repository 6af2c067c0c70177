/**
 * What a replay shows of a recording besides Check's verdicts: the label of where it was
 * recorded (kind or the sim provider) and the command output it kept, a long rule dump cut to its
 * head with the rest counted.
 */
import { describe, expect, it } from 'vitest';
import { findObservationFiles, readObservationFile } from './observations.ts';
import { requireLab, requireStep } from './registry.ts';
import { OUTPUT_MAX_LINES, recordedOutputs, replayStep } from './step-replay.ts';

describe('step replay', () => {
  it('labels a sim recording as the simulated cluster with its kube-proxy, never as kind', () => {
    const lab = requireLab('first-service');
    const replay = replayStep(lab, requireStep(lab, 'reach-web'), 'ipvs');
    expect(replay.solved.source.provider).toBe('sim');
    expect(replay.solved.source.label).toMatch(
      /^dplab's simulated cluster \(real kube-proxy v1\.\d+\.\d+ on network-namespace nodes\) · Kubernetes v1\.\d+\.\d+ · /,
    );
    expect(replay.solved.source.label).not.toContain('kind');
  });

  it('keeps a node rule dump whole, under its format and node', () => {
    const path = findObservationFiles('etp-local', 'follow-nodeport', 'solved', 'iptables')[0]!;
    const file = readObservationFile<{ withPod: { node: string; dump: { stdout: string } } }>(path);
    const outputs = recordedOutputs(file.observations);
    const withPod = outputs.find((o) => o.label === `\`iptables-save\` on ${file.observations.withPod.node}`);
    expect(withPod, JSON.stringify(outputs.map((o) => o.label))).toBeDefined();
    expect(withPod!.text).toBe(file.observations.withPod.dump.stdout.trimEnd());
    expect(withPod!.text).toContain('-A KUBE-NODEPORTS');
    expect(withPod!.omittedLines).toBe(0);
  });

  it('cuts an output longer than the page shows to its head and counts the rest', () => {
    const stdout = Array.from({ length: OUTPUT_MAX_LINES + 25 }, (_, i) => `line ${i}`).join('\n');
    const [out] = recordedOutputs({ client: { node: 'n1', result: { exitCode: 0, stdout, stderr: '' } } });
    expect(out).toEqual({
      label: 'Output kept as `client.result` on n1',
      text: stdout.split('\n').slice(0, OUTPUT_MAX_LINES).join('\n'),
      omittedLines: 25,
    });
  });

  it('refuses to replay a hand-written file: it is not what a cluster printed', () => {
    // cilium-l7-policy's solved state is hand-written (no Envoy where it was recorded).
    const lab = requireLab('cilium-l7-policy');
    const err = (() => {
      try {
        replayStep(lab, requireStep(lab, 'l7-policy'), 'cilium');
      } catch (e) {
        return e as { message: string; status: number; fix?: string };
      }
    })();
    expect(err?.status).toBe(404);
    expect(err?.message).toBe('cilium-l7-policy/l7-policy has no solved recording on cilium to replay.');
    expect(err?.fix).toContain('dplab verify-labs --lab cilium-l7-policy');
  });
});
