// The bundled fixtures as the explorer offers them to learners without Docker: a fixed list
// (format × scenario) that ids from a request are matched against; a request never names a path.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../base/paths.ts';
import { DplabError } from '../base/errors.ts';
import { FORMATS, type DataplaneModel, type Format, type ParseOptions } from './model.ts';
import { parse } from './index.ts';
import { servicePortName } from './synth/cluster.ts';
import { SCENARIOS, scenario, type ScenarioId } from './synth/scenarios.ts';
import { DEFAULT_HZ } from './ipvs.ts';
import { servicesIn } from './explain-view.ts';

/** From the project root, so this also works from a bundled chunk. */
const DIR = join(projectRoot, 'scripts', 'dataplane', 'fixtures');
const EXT: Record<Format, 'txt' | 'json'> = {
  'iptables-save': 'txt',
  'nft-json': 'json',
  ipvsadm: 'txt',
  'proc-ip-vs': 'txt',
  cilium: 'txt',
  'cilium-json': 'json',
};

/** The bundled fixture `<format>/<name>`'s file (text or JSON, as the tool prints it). */
export function fixtureFile(format: Format, name: string): string {
  return join(DIR, format, `${name}.${EXT[format]}`);
}

const DESCRIPTIONS: Record<ScenarioId, string> = {
  clusterip: 'default/web as a ClusterIP Service with three pods, seen from a worker node',
  nodeport: 'the same Service as a NodePort (30080), seen from a worker node',
  'etp-local-with-endpoints': 'NodePort with externalTrafficPolicy: Local, on a node that runs two of the three pods',
  'etp-local-without-endpoints': 'NodePort with externalTrafficPolicy: Local, on the control-plane node, which runs none of the pods',
  affinity: 'ClusterIP with sessionAffinity: ClientIP (10800 s), seen from a worker node',
  'no-endpoints': 'web as a NodePort plus web-idle, a Service whose selector matches no pod',
};

/** Fixtures outside the format × scenario grid. */
const EXTRA: ReadonlyArray<{ format: Format; name: string; scenario: ScenarioId; description: string }> = [];

import type { FixtureInfo } from '../wire/explain.ts';

export type { FixtureInfo };

/** kube-proxy's unit tests sync from a node named this (address 192.168.0.2, pods 10.0.0.0/8). */
const UPSTREAM_NODE = 'test-node';
const OVERALL =
  "kube-proxy v1.35.0's own test output: LoadBalancer (Local policy, and with source ranges), external IPs, NodePort, affinity, a Service without endpoints";
/** kube-proxy's own output (fixtures/README.md, "Upstream fixtures"): rules name their Services, no scenario needed. */
const UPSTREAM: ReadonlyArray<{ format: Format; name: string; description: string }> = [
  { format: 'iptables-save', name: 'upstream-v1.35-overall', description: OVERALL },
  { format: 'nft-json', name: 'upstream-v1.35-overall', description: OVERALL },
  ...(['iptables-save', 'nft-json'] as const).flatMap((format) => [
    {
      format,
      name: 'upstream-v1.35-internal-traffic-policy',
      description: "kube-proxy v1.35.0's own output: internalTrafficPolicy Local, with and without a local endpoint",
    },
    {
      format,
      name: 'upstream-v1.35-terminating',
      description: "kube-proxy v1.35.0's own output: ready and terminating endpoints, Local and Cluster policy",
    },
  ]),
];

interface Entry {
  info: FixtureInfo;
  file: string;
  /** The scenario a fixture of ours was written from (names for IPVS and Cilium text); none for upstream output. */
  scenario?: ScenarioId;
}

let catalog: Entry[] | undefined;

/** A fixture as listed: ours name the scenario they were written from, kube-proxy's own do not. */
interface Listed {
  format: Format;
  name: string;
  description: string;
  scenario?: ScenarioId;
}

function entries(): Entry[] {
  if (catalog) return catalog;
  const grid: Listed[] = FORMATS.flatMap((format) =>
    SCENARIOS.map((id) => ({ format, name: id as string, scenario: id, description: DESCRIPTIONS[id] })),
  );
  const listed: Listed[] = [...grid, ...EXTRA, ...UPSTREAM];
  catalog = listed
    .map((f) => ({ ...f, file: fixtureFile(f.format, f.name) }))
    .filter((f) => existsSync(f.file))
    .map((f) => {
      const entry: Entry = {
        file: f.file,
        scenario: f.scenario,
        info: {
          id: `${f.format}/${f.name}`,
          format: f.format,
          name: f.name,
          description: f.description,
          node: f.scenario ? scenario(f.scenario).node.name : UPSTREAM_NODE,
          services: [],
        },
      };
      entry.info.services = servicesIn(parseEntry(entry));
      return entry;
    });
  return catalog;
}

/**
 * IPVS and cilium text do not name Services; a learner would pass `--names`. The scenario the
 * fixture was written from knows every ClusterIP and NodePort, so the names come from there.
 */
function fixtureNames(id: ScenarioId): Record<string, string> {
  const c = scenario(id);
  const names: Record<string, string> = {};
  for (const s of c.services) {
    const name = servicePortName(s);
    const proto = s.protocol.toUpperCase();
    names[`${proto}/${s.clusterIP}:${s.port}`] = name;
    if (s.nodePort) for (const ip of [c.node.ip, '0.0.0.0']) names[`${proto}/${ip}:${s.nodePort}`] = name;
  }
  return names;
}

function parseEntry(e: Entry): DataplaneModel {
  const opts: ParseOptions = e.scenario
    ? { names: fixtureNames(e.scenario), hz: DEFAULT_HZ, serviceCidr: scenario(e.scenario).serviceCidr }
    : {};
  return parse(e.info.format, readFileSync(e.file, 'utf8'), opts);
}

export function listFixtures(): FixtureInfo[] {
  return entries().map((e) => e.info);
}

/** The fixture `<format>/<name>` parsed, or a 404 naming the known ones. */
export function loadFixture(format: string, name: string): { info: FixtureInfo; model: DataplaneModel } {
  const found = entries().find((e) => e.info.format === format && e.info.name === name);
  if (!found) {
    const known = entries().map((e) => e.info.id);
    throw new DplabError(`Unknown fixture "${`${format}/${name}`.slice(0, 80)}". Known: ${known.join(', ')}.`, { status: 404 });
  }
  return { info: found.info, model: parseEntry(found) };
}
