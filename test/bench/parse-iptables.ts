// How long the iptables parser takes on a cluster the size of syllabus I4 (10,000 Services × 3
// endpoints, 110,033 rules), beside the limit: reading the same dump from a file, splitting it into
// lines and the lines into tokens, which any reader of this text must at least do.
// `npx tsx test/bench/parse-iptables.ts [rounds] [services]`. Figures only; asserts nothing.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parse } from '../../scripts/dataplane/index.ts';
import type { SynthCluster, SynthService } from '../../scripts/dataplane/synth/cluster.ts';
import { writeIptablesSave } from '../dataplane/synth/iptables-save-writer.ts';
import { report } from './lib/report.ts';

const SERVICES = Number(process.argv[3] ?? 10_000);
const ENDPOINTS_PER_SERVICE = 3;
const DEFAULT_ROUNDS = 7;
/** The goal of issue 15: the parse within this many times the limit. */
const GOAL_RATIO = 3;
const NODES = ['bench-worker', 'bench-worker2', 'bench-worker3'];

function cluster(): SynthCluster {
  const services: SynthService[] = [];
  for (let i = 0; i < SERVICES; i++) {
    services.push({
      namespace: `ns-${i % 50}`,
      name: `svc-${i}`,
      portName: '',
      protocol: 'tcp',
      clusterIP: `10.96.${(i >> 8) & 255}.${i & 255}`,
      port: 80,
      targetPort: 8080,
      endpoints: Array.from({ length: ENDPOINTS_PER_SERVICE }, (_, e) => {
        const n = i * ENDPOINTS_PER_SERVICE + e;
        return { ip: `10.244.${(n >> 8) & 255}.${n & 255}`, node: NODES[e] };
      }),
    });
  }
  return { node: { name: NODES[0], ip: '172.18.0.3' }, clusterCidr: '10.244.0.0/16', serviceCidr: '10.96.0.0/16', services };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const rounds = Number(process.argv[2] ?? DEFAULT_ROUNDS);
const text = writeIptablesSave(cluster());
const dir = mkdtempSync(join(tmpdir(), 'dplab-bench-ipt-'));
const file = join(dir, 'iptables-save.txt');
writeFileSync(file, text);

/** The limit: read the file, split it into lines, split every line into its space-separated tokens. */
function tokenise(): number {
  let tokens = 0;
  for (const line of readFileSync(file, 'utf8').split('\n')) tokens += line.split(' ').length;
  return tokens;
}

const ours: number[] = [];
const limit: number[] = [];
let rules = 0;
try {
  // Interleaved rounds, so a busy moment of the machine hits both alike.
  for (let r = 0; r < rounds; r++) {
    let t0 = performance.now();
    tokenise();
    limit.push(performance.now() - t0);
    t0 = performance.now();
    rules = parse('iptables-save', text).entries;
    ours.push(performance.now() - t0);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const oursMs = median(ours);
const limitMs = median(limit);
console.log(
  `input: ${SERVICES} Services × ${ENDPOINTS_PER_SERVICE} endpoints, ${rules} rules, ${(text.length / 1e6).toFixed(1)} MB; ${rounds} rounds, medians`,
);
report('parse-iptables', [
  {
    measure: `iptables-save, ${rules.toLocaleString('en')} rules`,
    unit: 'ms',
    ours: oursMs,
    limit: { name: 'read + split + tokenise', value: limitMs },
    goal: { text: `≤ ${GOAL_RATIO} × tokenise`, met: oursMs <= GOAL_RATIO * limitMs },
  },
]);
