/**
 * Every lab, one line each. A static list (not a folder scan) so the same registry works under
 * tsx, vitest and Astro's bundler; scripts/labs/schema.test.ts fails when a labs/<id>/lab.ts is missing here.
 */
import firstService from './first-service/lab.ts';
import proxyModeRules from './proxy-mode-rules/lab.ts';
import ipvsInspect from './ipvs-inspect/lab.ts';
import iptablesChains from './iptables-chains/lab.ts';
import sessionAffinity from './session-affinity/lab.ts';
import internalTrafficLocal from './internal-traffic-local/lab.ts';
import etpLocal from './etp-local/lab.ts';
import ciliumKpr from './cilium-kpr/lab.ts';
import headless from './headless/lab.ts';
import ciliumL7Policy from './cilium-l7-policy/lab.ts';
import scaleCompare from './scale-compare/lab.ts';

export const LAB_MODULES = [
  { folder: 'first-service', definition: firstService },
  { folder: 'proxy-mode-rules', definition: proxyModeRules },
  { folder: 'ipvs-inspect', definition: ipvsInspect },
  { folder: 'iptables-chains', definition: iptablesChains },
  { folder: 'session-affinity', definition: sessionAffinity },
  { folder: 'internal-traffic-local', definition: internalTrafficLocal },
  { folder: 'etp-local', definition: etpLocal },
  { folder: 'cilium-kpr', definition: ciliumKpr },
  { folder: 'headless', definition: headless },
  { folder: 'cilium-l7-policy', definition: ciliumL7Policy },
  { folder: 'scale-compare', definition: scaleCompare },
];
