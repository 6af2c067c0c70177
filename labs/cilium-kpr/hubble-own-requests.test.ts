// Issue 24: a Hubble check must not pass on traffic it made itself. cilium-kpr's hubble-flows
// and cilium-l7-policy's hubble-drops send nothing (Hubble keeps flows: a request of a check's
// own would make the next Check pass without the learner).
import { describe, expect, it } from 'vitest';
import type { ClusterHandle } from '../../scripts/clusters/handle.ts';
import type { GatherContext } from '../../scripts/labs/checks/types.ts';
import { hubbleCheck } from './checks.ts';
import { dropsCheck } from '../cilium-l7-policy/checks.ts';

const pod = (name: string, nodeName = 'dplab-cilium-worker') => ({
  kind: 'Pod',
  metadata: { name },
  spec: { nodeName },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
});

/** A cluster whose pods all run; every kubectl call is recorded, in order. */
function recordingCluster(): { cluster: ClusterHandle; calls: string[] } {
  const calls: string[] = [];
  const result = (stdout = '') => ({ exitCode: 0, stdout, stderr: '', durationMs: 1 });
  const cluster = {
    mode: 'cilium',
    async kubectl(args: readonly string[]) {
      calls.push(args.join(' '));
      return result();
    },
    async kubectlJson(args: readonly string[], schema: { parse(v: unknown): unknown }) {
      calls.push(args.join(' '));
      const name = /metadata\.name=(\S+)/.exec(args.join(' '))?.[1];
      return schema.parse({ kind: 'List', items: name ? [pod(name)] : [pod('cilium-a', 'dplab-cilium-worker')] });
    },
  } as unknown as ClusterHandle;
  return { cluster, calls };
}

const ctx = (cluster: ClusterHandle, namespace: string): GatherContext => ({
  cluster,
  namespace,
  mode: 'cilium',
  signal: new AbortController().signal,
});

describe('Hubble checks count only the learner’s requests', () => {
  it('cilium-kpr hubble-flows sends no request to web and asks for flows from client only', async () => {
    const { cluster, calls } = recordingCluster();
    await hubbleCheck.gather(ctx(cluster, 'lab-cilium-kpr'));
    const execs = calls.filter((c) => c.includes(' exec '));
    expect(execs.some((c) => /curl|wget|http:\/\/web/.test(c))).toBe(false);
    const observe = execs.find((c) => c.includes('hubble observe'));
    expect(observe).toContain('--from-pod lab-cilium-kpr/client');
    expect(observe).toContain('--to-pod lab-cilium-kpr/web-');
  });

  it('cilium-l7-policy hubble-drops sends no request from other and reads its drops from Hubble', async () => {
    const { cluster, calls } = recordingCluster();
    await dropsCheck.gather(ctx(cluster, 'lab-cilium-l7-policy'));
    const execs = calls.filter((c) => c.includes(' exec '));
    expect(execs.some((c) => /curl|wget|http:\/\/api/.test(c))).toBe(false);
    expect(execs.find((c) => c.includes('hubble observe'))).toContain('--verdict DROPPED');
  });

  it('hubble-drops with other running and no drop of the learner’s in Hubble fails, and passes once there is one', () => {
    const agentSaying = (stdout: string) => ({
      other: { pod: { name: 'other', phase: 'Running', ready: true }, result: { exitCode: 0, stdout: '', stderr: '' } },
      hubble: { agents: [{ pod: 'cilium-a', node: 'dplab-cilium-worker', result: { exitCode: 0, stdout, stderr: '' } }] },
    });
    const evalCtx = { namespace: 'lab-cilium-l7-policy', mode: 'cilium' as const };
    const none = dropsCheck.evaluate(dropsCheck.observations.parse(agentSaying('')), evalCtx);
    expect(none.status).toBe('fail');
    expect(none.message).toContain('exec other -- curl');
    const drop = JSON.stringify({
      flow: {
        verdict: 'DROPPED',
        drop_reason_desc: 'POLICY_DENIED',
        source: { namespace: 'lab-cilium-l7-policy', pod_name: 'other' },
        destination: { namespace: 'lab-cilium-l7-policy', pod_name: 'api-1' },
        l4: { TCP: { source_port: 50314, destination_port: 8080 } },
      },
    });
    expect(dropsCheck.evaluate(dropsCheck.observations.parse(agentSaying(`${drop}\n`)), evalCtx).status).toBe('pass');
  });

  it('with no flows in Hubble, hubble-flows fails and names the request to send', () => {
    const obs = hubbleCheck.observations.parse({
      client: { pod: { name: 'client', phase: 'Running', ready: true }, result: { exitCode: 0, stdout: '', stderr: '' } },
      hubble: { agents: [{ pod: 'cilium-a', node: 'dplab-cilium-worker', result: { exitCode: 0, stdout: '', stderr: '' } }] },
    });
    const v = hubbleCheck.evaluate(obs, { namespace: 'lab-cilium-kpr', mode: 'cilium' });
    expect(v.status).not.toBe('pass');
    expect(v.message).toContain('exec client -- curl');
  });
});
