/**
 * A mode is one record (issue 38): proved on a throwaway fifth mode that exists only here. Its
 * complete record compiles and every table derived from the records reads it; take away any
 * field and the record no longer compiles (each `@ts-expect-error` below is checked by
 * `npm run typecheck`, which fails on an error it expected and did not get); add the name to the
 * modes without the entries and the course's tables no longer compile. ARCHITECTURE.md, "A mode",
 * lists the files in order.
 */
import { describe, expect, it } from 'vitest';
import {
  agentExec,
  CLUSTER_FOOTPRINT,
  dataplaneName,
  MODE_INFO,
  MODES,
  type Agent,
  type DataplaneOf,
  type HostNeeds,
  type ModeRecord,
  type Mode,
} from './modes.ts';
import { ENTRY_COUNTS } from '../labs/checks/scale.ts';
import { RULE_DUMPS, ruleDumpOf } from '../dataplane/read-commands.ts';
import { DATAPLANE_KINDS, replacesKubeProxy, type DataplaneKind } from '../wire/modes.ts';

/** An agent the course does not run; its names are Calico's (calico-node in calico-system). */
const CALICO: Agent = {
  id: 'calico',
  name: 'Calico',
  namespace: 'calico-system',
  daemonSet: 'calico-node',
  podLabel: 'k8s-app=calico-node',
  container: 'calico-node',
  status: ['calico-node', '-bpf', 'status'],
};

type Fifth = ModeRecord<'calico-ebpf', DataplaneOf<'agent'>>;

const FIFTH: Fifth = {
  id: 'calico-ebpf',
  title: 'Calico eBPF dataplane',
  short: 'Calico eBPF',
  dataplane: { kind: 'agent', agent: CALICO },
  podSubnet: '10.248.0.0/16',
  serviceSubnet: '10.100.0.0/16',
  footprint: { memoryBytes: 4 * 1024 ** 3, cpus: 3 },
  host: { who: 'Calico eBPF', minKernel: '5.3', kernelModules: null, cgroupV2: true, minKind: null, minKubernetes: null },
  // A real fifth dataplane brings its own format (ARCHITECTURE.md, "A parser"); any known one type-checks here.
  rules: { format: 'cilium-json', count: { what: 'NAT frontends', command: ['sh', '-c', 'calico-node -bpf nat dump | wc -l'] } },
};

/** Every field of a record; a field added to ModeRecord fails here until it is listed (and its missing case below). */
const FIELDS = {
  id: true,
  title: true,
  short: true,
  dataplane: true,
  podSubnet: true,
  serviceSubnet: true,
  rules: true,
  footprint: true,
  host: true,
} as const satisfies Record<keyof ModeRecord, true>;

function without<K extends keyof Fifth>(record: Fifth, field: K): Omit<Fifth, K> {
  const rest: Partial<Fifth> = { ...record };
  delete rest[field];
  return rest as Omit<Fifth, K>;
}

// Each of these is a compile error: a mode lacking one field of its record is refused.
// @ts-expect-error a mode without its id
const _noId: Fifth = without(FIFTH, 'id');
// @ts-expect-error a mode without its title
const _noTitle: Fifth = without(FIFTH, 'title');
// @ts-expect-error a mode without its short label
const _noShort: Fifth = without(FIFTH, 'short');
// @ts-expect-error a mode without its dataplane
const _noDataplane: Fifth = without(FIFTH, 'dataplane');
// @ts-expect-error a mode without its pod subnet
const _noPodSubnet: Fifth = without(FIFTH, 'podSubnet');
// @ts-expect-error a mode without its Service subnet
const _noServiceSubnet: Fifth = without(FIFTH, 'serviceSubnet');
// @ts-expect-error a mode without how its rules are read
const _noRules: Fifth = without(FIFTH, 'rules');
// @ts-expect-error a mode without what its cluster asks of the host
const _noFootprint: Fifth = without(FIFTH, 'footprint');
// @ts-expect-error a mode without what its dataplane needs of the host (kernel, modules, cgroups, kind, Kubernetes)
const _noHost: Fifth = without(FIFTH, 'host');
// @ts-expect-error an agent mode whose dataplane is kube-proxy's: the kind must be the wire's
const _wrongKind: Fifth = { ...FIFTH, dataplane: { kind: 'kube-proxy', proxyMode: 'iptables' } };
// @ts-expect-error an agent without its status command (every Agent field is required alike)
const _agentWithoutStatus: Agent = { ...CALICO, status: undefined };
// @ts-expect-error host needs that do not say the kernel they need (every need is required: null says none)
const _hostWithoutKernel: HostNeeds = { ...FIFTH.host, minKernel: undefined };
// @ts-expect-error host needs that do not say which kernel modules they load
const _hostWithoutModules: HostNeeds = { ...FIFTH.host, kernelModules: undefined };
// @ts-expect-error a kube-proxy dataplane without its proxy mode
const _kubeProxyWithoutMode: DataplaneOf<'kube-proxy'> = { kind: 'kube-proxy' };

// Adding the name to MODES without the entries: the course's tables refuse it.
type FiveModes = Mode | 'calico-ebpf';
// @ts-expect-error the fifth mode has no dataplane kind on the wire (scripts/wire/modes.ts)
const _fiveKinds: Record<FiveModes, DataplaneKind> = DATAPLANE_KINDS;
// @ts-expect-error the fifth mode has no record (scripts/catalogue/modes.ts)
const _fiveRecords: { readonly [M in FiveModes]: ModeRecord<M> } = MODE_INFO;

describe('a mode is one record', () => {
  it('each record refused above lacks what the compiler said, and every field has its refused record', () => {
    const refused: [object, keyof typeof FIELDS][] = [
      [_noId, 'id'],
      [_noTitle, 'title'],
      [_noShort, 'short'],
      [_noDataplane, 'dataplane'],
      [_noPodSubnet, 'podSubnet'],
      [_noServiceSubnet, 'serviceSubnet'],
      [_noRules, 'rules'],
      [_noFootprint, 'footprint'],
      [_noHost, 'host'],
    ];
    for (const [record, field] of refused) expect(Object.keys(record), field).not.toContain(field);
    expect(refused.map(([, field]) => field).sort()).toEqual(Object.keys(FIELDS).sort());
    expect(_wrongKind.dataplane.kind).toBe('kube-proxy');
    expect(_agentWithoutStatus.status).toBeUndefined();
    expect(_hostWithoutKernel.minKernel).toBeUndefined();
    expect(_hostWithoutModules.kernelModules).toBeUndefined();
    expect(_kubeProxyWithoutMode).not.toHaveProperty('proxyMode');
    expect(Object.keys(_fiveKinds)).not.toContain('calico-ebpf');
    expect(Object.keys(_fiveRecords)).not.toContain('calico-ebpf');
  });

  it('a fifth mode, given only its record, is read like the others', () => {
    expect(Object.keys(FIFTH).sort()).toEqual(Object.keys(FIELDS).sort());
    expect(ruleDumpOf(FIFTH)).toEqual({ format: 'cilium-json', agent: CALICO, command: ['cilium-dbg', 'service', 'list', '-o', 'json'] });
    expect(dataplaneName(FIFTH)).toBe('calico');
    expect(agentExec(CALICO, CALICO.status)).toEqual([
      '-n',
      'calico-system',
      'exec',
      'ds/calico-node',
      '-c',
      'calico-node',
      '--',
      'calico-node',
      '-bpf',
      'status',
    ]);
  });

  it("every course mode's record has every field, its own id, and the wire's dataplane kind", () => {
    for (const mode of MODES) {
      const r = MODE_INFO[mode];
      expect(Object.keys(r).sort(), mode).toEqual(Object.keys(FIELDS).sort());
      expect(r.id).toBe(mode);
      expect(r.dataplane.kind, mode).toBe(DATAPLANE_KINDS[mode]);
      expect(replacesKubeProxy(mode), mode).toBe(r.dataplane.kind === 'agent');
    }
  });

  it('the per-mode tables derive from the records', () => {
    for (const mode of MODES) {
      expect(RULE_DUMPS[mode]).toEqual(ruleDumpOf(MODE_INFO[mode]));
      expect(ENTRY_COUNTS[mode].what).toBe(MODE_INFO[mode].rules.count.what);
      expect(CLUSTER_FOOTPRINT[mode]).toBe(MODE_INFO[mode].footprint);
    }
    expect(replacesKubeProxy('calico-ebpf')).toBe(false);
  });
});
