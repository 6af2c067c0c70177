/**
 * Whether socket-level load balancing is on, as `cilium-dbg status --verbose` says it: read from
 * the KubeProxyReplacement Details block captured on the kind test environment's Cilium 1.19.4
 * (a cgroup v1 host), and reported beside the verdict without deciding it.
 */
import { describe, expect, it } from 'vitest';
import { evaluateProxyMode, socketLB, type ProxyModeObservation } from './proxy-mode.ts';

/** The head of the status and its KubeProxyReplacement Details block, as the agent printed them. */
const VERBOSE = `KVStore:                Disabled
KubeProxyReplacement:   True   [eth0    172.18.0.2 fc00:f853:ccd:e793::2 fe80::42:acff:fe12:2 (Direct Routing)]
Hubble:                  Ok   Current/Max Flows: 112/4095 (2.74%), Flows/s: 1.34   Metrics: Disabled
KubeProxyReplacement Details:
  Status:               True
  Socket LB:            Enabled
  Socket LB Tracing:    Enabled
  Socket LB Coverage:   Full
  Devices:              eth0    172.18.0.2 fc00:f853:ccd:e793::2 fe80::42:acff:fe12:2 (Direct Routing)
  Mode:                 SNAT
  Backend Selection:    Random
BPF Maps:   dynamic sizing: on (ratio: 0.002500)
`;

const cilium = (stdout: string): ProxyModeObservation => ({
  kind: 'cilium',
  status: { exitCode: 0, stdout, stderr: '' },
  kubeProxy: { items: [] },
});
const ctx = { mode: 'cilium' as const, namespace: 'lab-cilium-kpr' };

describe('socket-level load balancing in cilium-dbg status --verbose', () => {
  it('reads whether it is on and its coverage', () => {
    expect(socketLB(VERBOSE)).toBe('Enabled (coverage Full)');
  });

  it('reads it off, where the agent says so (and no coverage line follows)', () => {
    expect(
      socketLB(
        VERBOSE.replace('Socket LB:            Enabled', 'Socket LB:            Disabled').replace(/^ {2}Socket LB Coverage:.*\n/m, ''),
      ),
    ).toBe('Disabled');
  });

  it('says nothing from the short status, which has no details block', () => {
    expect(socketLB(VERBOSE.slice(0, VERBOSE.indexOf('KubeProxyReplacement Details')))).toBeNull();
  });

  it('is a fact beside the verdict, not a condition of it: off or not shown, the cluster still passes', () => {
    const on = evaluateProxyMode(cilium(VERBOSE), ctx);
    expect(on.status).toBe('pass');
    expect(on.facts.at(-1)).toMatchObject({ label: 'cilium-dbg status --verbose: Socket LB', seen: 'Enabled (coverage Full)', ok: true });
    const short = evaluateProxyMode(cilium(VERBOSE.slice(0, VERBOSE.indexOf('KubeProxyReplacement Details'))), ctx);
    expect(short.status).toBe('pass');
    expect(short.facts.at(-1)).toMatchObject({ seen: 'not shown', ok: false });
  });
});
