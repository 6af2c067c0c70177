// How long the iptables parser takes on a cluster the size of syllabus I4 (10,000 Services x 3
// endpoints): `npx tsx scripts/bench/parse-iptables.ts [runs]`. Prints figures; asserts nothing.
import { performance } from 'node:perf_hooks';
import { parse } from '../dataplane/index.ts';
import type { SynthCluster, SynthService } from '../dataplane/synth/cluster.ts';
import { writeIptablesSave } from '../dataplane/synth/iptables-save-writer.ts';

/** `npx tsx scripts/bench/parse-iptables.ts [runs] [services]`: 10,000 Services by default. */
const SERVICES = Number(process.argv[3] ?? 10_000);
const ENDPOINTS_PER_SERVICE = 3;
const DEFAULT_RUNS = 7;
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

const runs = Number(process.argv[2] ?? DEFAULT_RUNS);
const text = writeIptablesSave(cluster());
const times: number[] = [];
let rules = 0;
for (let r = 0; r < runs; r++) {
  const t0 = performance.now();
  const model = parse('iptables-save', text);
  times.push(performance.now() - t0);
  rules = model.entries;
}
times.sort((a, b) => a - b);
const median = times[Math.floor(times.length / 2)];
console.log(`input: ${SERVICES} Services x ${ENDPOINTS_PER_SERVICE} endpoints, ${rules} rules, ${(text.length / 1e6).toFixed(1)} MB`);
console.log(
  `runs: ${runs}  median: ${median.toFixed(0)} ms  min: ${times[0].toFixed(0)} ms  max: ${times[times.length - 1].toFixed(0)} ms`,
);
console.log(`throughput: ${Math.round(rules / (median / 1000)).toLocaleString('en')} rules/s`);
