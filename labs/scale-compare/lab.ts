/**
 * Measuring cost against size: generate 100, then 1,000 Services in front of the same three pods
 * and watch the node's dataplane grow (rules, nft lines, IPVS virtual servers or Cilium
 * frontends) together with kube-proxy's sync time, then time new connections to a ClusterIP,
 * on every mode.
 */
import { MODES } from '../../scripts/catalogue/modes.ts';
import { defineLab } from '../../scripts/labs/schema.ts';
import { labText } from '../../scripts/labs/text.ts';
import { baselineCheck, cleanupCheck, CONNECT_ANSWER, connectCheck, growthCheck } from './checks.ts';
import { AGNHOST, WEB_DEPLOYMENT } from '../_shared/workload.ts';
import { recordCommand, recordSnippets, recordSteps } from '../../scripts/labs/checks/answer.ts';

const ID = 'scale-compare';
const NS = 'lab-scale-compare';
const COUNT = 'sh scale-compare/count.sh';
const SYNC = 'sh scale-compare/sync-time.sh';
const CONNECT = 'bash scale-compare/connect-cost.sh';
const KUBE_PROXY: ('iptables' | 'ipvs' | 'nftables')[] = ['iptables', 'ipvs', 'nftables'];
const make = (n: number) => `sh scale-compare/make-services.sh ${n}`;
/** A growth step's solution: create up to `n` Services, give the dataplane `wait` seconds, count; kube-proxy modes also read its sync time. */
function growTo(n: number, wait: number) {
  const commands = [make(n), `sleep ${wait}`, COUNT];
  return { commands, byMode: Object.fromEntries(KUBE_PROXY.map((mode) => [mode, [...commands, SYNC]])) };
}

export default defineLab({
  id: ID,
  title: 'What 1,000 Services cost each dataplane',
  summary:
    "Generate 100 and then 1,000 Services and measure, on your own cluster, how the node's rules or entries grow, how long kube-proxy takes to rewrite them and what a new connection costs; compare the numbers across modes.",
  modes: [...MODES],
  minutes: 30,
  concepts: ['I4', 'C2'],
  namespace: NS,
  setup: {
    manifests: [WEB_DEPLOYMENT],
    workspace: ['manifests/count.sh', 'manifests/make-services.sh', 'manifests/sync-time.sh', 'manifests/connect-cost.sh'],
    images: [AGNHOST],
  },
  steps: [
    {
      id: 'baseline',
      title: 'Measure the baseline',
      instructions: labText(ID, 'steps/baseline.md'),
      concepts: ['C2'],
      snippets: [
        { label: 'How the count is taken', command: 'cat scale-compare/count.sh' },
        { label: 'Count now', command: COUNT },
        { label: 'kube-proxy sync time so far', command: SYNC, modes: KUBE_PROXY },
        { label: 'Count until it holds still', command: `${COUNT} --settled` },
        { label: 'Keep the settled count', command: `baseline="$(${COUNT} --settled)"` },
        { label: 'Record the baseline', command: recordCommand(NS, 'scale', ['baseline']) },
      ],
      hints: [
        "`count.sh` picks the right command for this cluster's mode from `$DPLAB_MODE` and prints one number.",
        `Keep the count in a variable, \`baseline="$(${COUNT} --settled)"\`, then store it (\`--settled\` counts until the number holds still: just after the setup, kube-proxy may still be writing web's rules).`,
        'Measure before you create any Service; the next steps compare against this number.',
      ],
      solution: {
        commands: [COUNT, ...recordSteps(NS, 'scale', { baseline: `$(${COUNT} --settled)` })],
        explanation: 'The baseline is what the system Services (kubernetes, kube-dns) and the setup already cost on this node.',
      },
      check: baselineCheck,
    },
    {
      id: 'hundred',
      title: 'Add 100 Services',
      instructions: labText(ID, 'steps/hundred.md'),
      concepts: ['I4', 'C2'],
      snippets: [
        { label: 'Read the generator', command: 'cat scale-compare/make-services.sh' },
        { label: 'Create 100 Services', command: make(100) },
        { label: 'Count again', command: COUNT },
        { label: 'kube-proxy sync time', command: SYNC, modes: KUBE_PROXY },
        {
          label: 'One generated Service in the rules',
          command: 'docker exec "$DPLAB_CLUSTER-worker" sh -c \'iptables-save | grep "lab-scale-compare/scale-1 "\'',
          modes: ['iptables'],
        },
      ],
      hints: [
        '`make-services.sh 100` writes the manifests of the Services that do not exist yet and creates them in batches; each selects the three web pods.',
        'Give the dataplane a few seconds to catch up, then run `count.sh` again and subtract the baseline.',
        'On iptables, expect about 11 rules per Service with three endpoints: one in KUBE-SERVICES, the Service chain, and two per endpoint chain.',
      ],
      solution: {
        ...growTo(100, 5),
        explanation:
          'Every Service becomes entries on every node: chains and rules (iptables), map elements and chains (nftables), a virtual server (IPVS) or a frontend in an eBPF map (Cilium).',
      },
      check: growthCheck(100),
    },
    {
      id: 'thousand',
      title: 'Go to 1,000 Services',
      instructions: labText(ID, 'steps/thousand.md'),
      concepts: ['I4', 'C2'],
      snippets: [
        { label: 'Create the rest, up to 1,000', command: make(1000) },
        { label: 'Count again', command: COUNT },
        { label: 'kube-proxy sync time', command: SYNC, modes: KUBE_PROXY },
        {
          label: 'The same generated Service in the rules, now',
          command: 'docker exec "$DPLAB_CLUSTER-worker" sh -c \'iptables-save | grep -c "lab-scale-compare/scale-1 "\'',
          modes: ['iptables'],
        },
      ],
      hints: [
        'The generator keeps the first 100 and adds scale-101 … scale-1000; creating them takes a minute.',
        'Compare growth per Service with the previous step: it stays about the same, the total grows tenfold.',
        'The sync-time average mixes all syncs since kube-proxy started; run `sync-time.sh` before and after to see the later, larger syncs pull it up.',
        "On iptables, with more than 1,000 endpoints kube-proxy switches to its large cluster mode and stops writing a comment on every endpoint rule: the grep for one Service's comment now finds fewer lines.",
      ],
      solution: {
        ...growTo(1000, 15),
        explanation:
          'Ten times the Services, ten times the entries. What differs between the modes is how a packet finds its entry (a linear walk in iptables, a hash lookup elsewhere) and how much has to be rewritten on each change.',
      },
      check: growthCheck(1000),
    },
    {
      id: 'connect',
      title: 'Time a new connection',
      instructions: labText(ID, 'steps/connect.md'),
      concepts: ['C2'],
      snippets: [
        { label: 'How the connections are timed', command: 'cat scale-compare/connect-cost.sh' },
        { label: 'Time 400 new connections', command: CONNECT },
        { label: 'The same, to the Service whose rule comes first', command: `${CONNECT} --first`, modes: ['iptables'] },
        {
          label: "Where the Services' rules stand in KUBE-SERVICES",
          command:
            'docker exec "$DPLAB_CLUSTER-worker" sh -c \'iptables-save -t nat | grep "^-A KUBE-SERVICES" | grep -n "cluster IP" | tail -3\'',
          modes: ['iptables'],
        },
        ...recordSnippets(NS, CONNECT_ANSWER.configMap, { [CONNECT_ANSWER.key]: '<median>' }, 'Record your median'),
      ],
      hints: [
        '`connect-cost.sh` prints the median and the 90th percentile of 400 timed connects; `--median` prints the median alone.',
        `Keep it in a variable and store it: \`median_us="$(${CONNECT} --median)"\`, then the record command.`,
        'On iptables, run it twice: kube-proxy rewrites KUBE-SERVICES in a new order on every sync, so the Service with the most rules ahead of it can change between runs; the script says how many were ahead before and after.',
        'To see the curve further, go to 5,000 Services (`sh scale-compare/make-services.sh 5000`, a few minutes) and time again; the chart under the steps shows what real kind clusters measured at 10,000.',
      ],
      solution: {
        commands: [`${CONNECT}`, ...recordSteps(NS, CONNECT_ANSWER.configMap, { [CONNECT_ANSWER.key]: `$(${CONNECT} --median)` })],
        explanation:
          'A new connection pays for finding its Service once; conntrack carries the rest of it. On iptables that is a walk down KUBE-SERVICES, so the cost depends on how many rules stand ahead of the Service; nftables, IPVS and Cilium look it up in a hash, whatever the count.',
      },
      check: connectCheck(1000, labText(ID, 'manifests/connect-cost.sh')),
    },
    {
      id: 'cleanup',
      title: 'Clean up',
      instructions: labText(ID, 'steps/cleanup.md'),
      concepts: ['C2'],
      snippets: [
        { label: 'Delete the generated Services', command: `kubectl -n ${NS} delete services -l dplab-scale=yes` },
        { label: 'Count again', command: COUNT },
      ],
      hints: [
        'Every generated Service carries the label `dplab-scale=yes`; delete them by that label. kubectl sends one request per Service, so a thousand take a few minutes on a busy machine.',
        'The count falls back towards your baseline. In iptables large cluster mode kube-proxy deletes stale chains on a sync at least 30 s after its last clean-up, and on every sync once the cluster is under 1,000 endpoints again, so give it half a minute.',
      ],
      solution: {
        commands: [`kubectl -n ${NS} delete services -l dplab-scale=yes --wait`, 'sleep 30', COUNT],
        explanation: 'The other labs read the same nodes: a thousand leftover Services would be in every rule dump they show you.',
      },
      check: cleanupCheck,
    },
  ],
});
