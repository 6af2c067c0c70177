// Issue 11: after scale-compare's 1,000 Services (× 3 endpoints) a node holds thousands of rules
// that are not the lab's, and kube-proxy is in large cluster mode (no per-endpoint comments). The
// iptables labs must still pass: each step's solution is run (through sh, with docker/kubectl
// stand-ins that answer with the dump) on a real recorded dump plus those leftovers, the answer it
// records goes into the observation, and the step's check is evaluated on it.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadLabs } from '../../scripts/labs/registry.ts';
import { solutionFor } from '../../scripts/labs/schema.ts';
import { findObservationFile } from '../../scripts/labs/observations.ts';
import { recordedObservations } from '../../test/fixtures/recorded.ts';
import { withLeftoverServices } from '../../test/fixtures/leftover-services.ts';
import { iptablesServiceRules } from './iptables-service.ts';
import { waitForWebRules } from './workload.ts';

const LEFTOVERS = { services: 1000, endpointsEach: 3 };
/** ns1/itp-local in upstream-gen/dplab_iptables_dump_test.go: the endpoints on the test node. */
const LOCAL_ITP_ENDPOINTS = 1;
const dir = mkdtempSync(join(tmpdir(), 'dplab-leftovers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const stub = (name: string, body: string) => {
  writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
  chmodSync(join(dir, name), 0o755);
};
// iptables-save (whole dump, or one table with -t); docker exec NODE CMD… runs CMD here.
stub(
  'iptables-save',
  `if [ "$1" = -t ]; then awk -v t="*$2" '$0 == t {on=1} on {print} on && $0 == "COMMIT" {exit}' "$DUMP"; else cat "$DUMP"; fi`,
);
// A node with a dump of its own (etp-local reads two nodes whose rules differ) answers with that one.
stub(
  'docker',
  `echo "$*" >> "$LOG.docker"; [ "$1" = exec ] || exit 0; [ -f "$LOG.node.$2" ] && DUMP="$LOG.node.$2" && export DUMP; shift 2; case "$1" in iptables-save|sh) "$@" ;; *) exit 0 ;; esac`,
);
stub(
  'kubectl',
  `echo "$*" >> "$LOG.kubectl"; case "$*" in *readyReplicas*) printf "$READY" ;; *nodeName*) printf "$DPLAB_CLUSTER-worker" ;; *"create configmap"*) echo "$*" >> "$LOG.answers" ;; esac; exit 0`,
);
stub('sleep', 'exit 0');

let runs = 0;
/** Runs shell lines with the stand-ins first on PATH; returns stdout and what docker and kubectl were asked. */
function sh(lines: string[], dump: string, ready = '3', byNode: Record<string, string> = {}) {
  const base = join(dir, `run-${runs++}`);
  writeFileSync(`${base}.dump`, dump);
  for (const [node, text] of Object.entries(byNode)) writeFileSync(`${base}.node.${node}`, text);
  const out = execFileSync('sh', ['-c', lines.join('\n')], {
    encoding: 'utf8',
    env: {
      ...process.env,
      PATH: `${dir}:${process.env.PATH}`,
      DUMP: `${base}.dump`,
      LOG: base,
      READY: ready,
      // The cluster the observations were recorded on (dplab-iptables, or a seat's dplab-rec-iptables), so the solution names its nodes.
      DPLAB_CLUSTER: Object.keys(byNode)[0]?.replace(/-(control-plane|worker\d*)$/, '') ?? 'dplab-iptables',
    },
  });
  const read = (f: string) => {
    try {
      return readFileSync(`${base}.${f}`, 'utf8').split('\n').filter(Boolean);
    } catch {
      return [];
    }
  };
  return { out, docker: read('docker'), answers: read('answers') };
}

/** A real dump recorded on kube-proxy v1.35 (kind first, else the sim provider; every earlier lab's web still there). */
const recorded = (): string => recordedObservations('headless', 'no-rules', 'solved', 'iptables').clusterIp.dump.stdout;

describe('leftover Services in the real iptables-save shape', () => {
  const plain = recorded();
  const crowded = withLeftoverServices(plain, LEFTOVERS);

  it('put the node in large cluster mode: the per-endpoint comments are gone, the "cluster IP" ones stay', () => {
    expect(plain).toMatch(/"lab-headless\/web -> 10\.244\./);
    expect(crowded).not.toMatch(/"lab-headless\/web -> /);
    expect(crowded).toContain('"lab-headless/web cluster IP"');
    expect(crowded.split('\n').filter((l) => l.startsWith('-A KUBE-SERVICES ')).length).toBeGreaterThan(1000);
    // The old count (grep for web's endpoint comments) finds nothing any more.
    expect(sh([`iptables-save -t nat | grep -c '^-A KUBE-SVC-.*"lab-headless/web -> ' || true`], crowded).out.trim()).toBe('0');
  });

  it.each([
    ['lab-headless', 3],
    ['lab-first-service', 3],
    ['lab-iptables-chains', 5],
  ])("%s/web's endpoint chains are counted the same with and without them", (ns, n) => {
    const count = `iptables-save -t nat | ${iptablesServiceRules(ns, 'web', 'endpoint-count')}`;
    expect(sh([count], plain).out.trim()).toBe(String(n));
    expect(sh([count], crowded).out.trim()).toBe(String(n));
  });

  it("internal-traffic-local's rule snippets show agent's chains, or its DROP where Local leaves no endpoint, on kube-proxy v1.35's output among 1,000 leftovers", () => {
    const upstream = readFileSync(
      join(import.meta.dirname, '../../scripts/dataplane/fixtures/iptables-save/upstream-v1.35-internal-traffic-policy.txt'),
      'utf8',
    );
    const step = loadLabs()
      .find((l) => l.id === 'internal-traffic-local')!
      .steps.find((s) => s.id === 'set-local')!;
    const snippet = step.snippets!.find((x) => x.label?.startsWith('Rules on the agent'))!.command;
    // The upstream dump's Services stand in for agent: one with a local endpoint, one without.
    const as = (svc: string) => snippet.replaceAll('lab-internal-traffic-local/agent', `ns1/${svc}`).replaceAll("'agent'", `'${svc}'`);
    const crowded = withLeftoverServices(upstream, LEFTOVERS);
    const near = sh([as('itp-local')], crowded).out;
    // The jump has lost its comment among the leftovers (large cluster mode): a grep for agent's name would miss it.
    expect(near).toMatch(/^-A KUBE-SVL-DPKTHXTGNGN4T5NQ -j KUBE-SEP-CMPXLEVBVD62VTSF$/m);
    expect(near).toMatch(/^-A KUBE-SEP-CMPXLEVBVD62VTSF .*-j DNAT --to-destination 10\.0\.1\.1:80$/m);
    expect(near.trim().split('\n')).toHaveLength(4);
    const far = sh([as('itp-none')], crowded).out;
    expect(far.trim()).toMatch(/^-A KUBE-SERVICES -m comment --comment "ns1\/itp-none:p80 has no local endpoints" .* -j DROP$/);
  });

  it("follows a KUBE-SVL chain too (internalTrafficPolicy Local), in kube-proxy v1.35's own output", () => {
    const upstream = readFileSync(
      join(import.meta.dirname, '../../scripts/dataplane/fixtures/iptables-save/upstream-v1.35-internal-traffic-policy.txt'),
      'utf8',
    );
    expect(sh([`iptables-save -t nat | ${iptablesServiceRules('ns1', 'itp-local', 'endpoint-count')}`], upstream).out.trim()).toBe(
      String(LOCAL_ITP_ENDPOINTS),
    );
  });

  it("waitForWebRules stops at the first look when web's rules are there, leftovers or not", () => {
    const wait = waitForWebRules('lab-headless', 'iptables', { node: 'dplab-iptables-control-plane' });
    expect(sh([wait], crowded).docker).toHaveLength(1);
    expect(sh([wait], plain).docker).toHaveLength(1);
  });

  it('waitForWebRules keeps waiting (180 looks) while the rules lack a ready pod', () => {
    const wait = waitForWebRules('lab-headless', 'iptables', { node: 'dplab-iptables-control-plane' });
    expect(sh([wait], crowded, '4').docker).toHaveLength(180);
  });
});

/** Every iptables-save dump in an observation (objects with format and dump.stdout). */
function dumps(value: unknown, found: Array<{ node: string; dump: { stdout: string } }> = []) {
  if (Array.isArray(value)) for (const v of value) dumps(v, found);
  else if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (o.format === 'iptables-save' && o.dump && typeof (o.dump as { stdout?: unknown }).stdout === 'string') found.push(o as never);
    else for (const v of Object.values(o)) dumps(v, found);
  }
  return found;
}

/** `create configmap NAME --from-literal=K=V …` as kubectl was asked: the answers the solution recorded. */
function recordedAnswers(lines: string[]): Array<{ name: string; data: Record<string, string> }> {
  return lines.map((l) => {
    const name = /create configmap (\S+)/.exec(l)?.[1] ?? '';
    const data: Record<string, string> = {};
    for (const m of l.matchAll(/--from-literal=([^=\s]+)=(.*?)(?= --|$)/g)) data[m[1]] = m[2];
    return { name, data };
  });
}

function setAnswer(obs: unknown, name: string, data: Record<string, string>): boolean {
  let set = false;
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      const o = v as { kind?: string; metadata?: { name?: string }; data?: Record<string, string> };
      if (o.kind === 'ConfigMap' && o.metadata?.name === name) {
        o.data = { ...o.data, ...data };
        set = true;
      } else Object.values(o).forEach(walk);
    }
  };
  walk(obs);
  return set;
}

const cases = loadLabs().flatMap((lab) =>
  lab.modes.includes('iptables')
    ? lab.steps
        .filter((s) => findObservationFile(lab.id, s.id, 'solved', 'iptables'))
        .map((s) => ({ lab, step: s, obs: recordedObservations(lab.id, s.id, 'solved', 'iptables') }))
        .filter((c) => dumps(c.obs).length > 0 && c.lab.id !== 'scale-compare')
        .map((c) => [`${c.lab.id} / ${c.step.id}`, c] as const)
    : [],
);

describe('iptables lab steps with 1,000 leftover Services on the node', () => {
  it('cover the labs that read iptables rules', () => {
    const labs = new Set(cases.map(([, c]) => c.lab.id));
    // internal-traffic-local's checks probe traffic and read no dump; scale-compare counts everything on purpose.
    expect([...labs].sort()).toEqual(['etp-local', 'headless', 'iptables-chains', 'proxy-mode-rules', 'session-affinity']);
    expect(cases.length).toBeGreaterThanOrEqual(7);
  });

  it.each(cases)('%s: the solution, run on the crowded node, still passes the check', (_name, { lab, step, obs }) => {
    const crowded = structuredClone(obs);
    const found = dumps(crowded);
    for (const d of found) d.dump.stdout = withLeftoverServices(d.dump.stdout, LEFTOVERS);
    // The solution's commands read the crowded dump of the node they name (else the first); the answers they record replace the recorded ones.
    const run = sh(solutionFor(step, 'iptables'), found[0].dump.stdout, '3', Object.fromEntries(found.map((d) => [d.node, d.dump.stdout])));
    for (const a of recordedAnswers(run.answers)) expect(setAnswer(crowded, a.name, a.data), `${a.name} is in the observation`).toBe(true);
    const result = step.check.evaluate(step.check.observations.parse(crowded), { namespace: lab.namespace, mode: 'iptables' });
    expect(result.status, result.message).toBe('pass');
    // What the pass says must be true of the crowded node too (its comments are gone).
    if (lab.id === 'iptables-chains' && step.id === 'scale-and-count') {
      expect(result.message).toMatch(/^Only 2 rules name the Service: .*large cluster mode/);
      const plain = step.check.evaluate(step.check.observations.parse(obs), { namespace: lab.namespace, mode: 'iptables' });
      expect(plain.message).toMatch(/^17 rules for one Service with 5 endpoints: .*\(2 \+ 3 × 5\)/);
    }
  });
});
