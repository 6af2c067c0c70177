/**
 * The iptables chain walk in depth: the statistic probabilities that make random balancing
 * even, how the rules grow when web scales, and the conntrack entry every connection leaves.
 */
import { recordSnippets, recordSteps } from '../../scripts/labs/checks/answer.ts';
import { defineLab } from '../../scripts/labs/schema.ts';
import { labText } from '../../scripts/labs/text.ts';
import { conntrackCheck, probabilitiesCheck, scaleCheck, SCALED } from './checks.ts';
import { WEB_AND_CLIENT, waitForWebRules } from '../_shared/workload.ts';

const ID = 'iptables-chains';
const NS = 'lab-iptables-chains';
const NODE = '"$DPLAB_CLUSTER-worker"';
const NAT = `docker exec ${NODE} iptables-save -t nat`;
const SVC_CHAIN = `$(${NAT} | awk '/^-A KUBE-SERVICES .*"${NS}\\/web cluster IP"/ {print $NF}')`;
/** web's KUBE-SVC chain named first, so the snippets that read it stay short: `chain=$(…)`. */
const NAME_CHAIN = { label: "Keep the chain web's entry jumps to in `chain`", command: `chain=${SVC_CHAIN}` };
const PROBS = `$(${NAT} | grep "^-A ${SVC_CHAIN} " | grep -o 'probability [0-9.]*' | cut -d' ' -f2 | xargs)`;
const COUNT = `$(docker exec ${NODE} iptables-save | grep -c '${NS}/web' || true)`;
const CLUSTER_IP = `$(kubectl -n ${NS} get service web -o jsonpath='{.spec.clusterIP}')`;
const CLIENT_NODE = `$(kubectl -n ${NS} get pod client -o jsonpath='{.spec.nodeName}')`;
const REQUESTS = `for i in $(seq 1 10); do kubectl -n ${NS} exec client -- curl -s --max-time 2 http://web/hostname; echo; done`;
const CT_MAX = `$(docker exec ${CLIENT_NODE} cat /proc/sys/net/netfilter/nf_conntrack_max)`;

export default defineLab({
  id: ID,
  title: 'iptables chains, probabilities and conntrack',
  summary:
    "Walk web's chains rule by rule, work out why the probabilities 1/3 and 1/2 give an equal share, scale web and count how the rules grow, then find the conntrack entries each connection leaves.",
  modes: ['iptables'],
  minutes: 30,
  concepts: ['I1', 'I2', 'I4', 'I5', 'I6'],
  namespace: NS,
  setup: WEB_AND_CLIENT,
  steps: [
    {
      id: 'read-probabilities',
      title: "Read the probabilities in web's KUBE-SVC chain",
      instructions: labText(ID, 'steps/read-probabilities.md'),
      concepts: ['I1', 'I2', 'I6'],
      snippets: [
        { label: "web's entry in KUBE-SERVICES", command: `${NAT} | grep '${NS}/web cluster IP'` },
        NAME_CHAIN,
        { label: 'The KUBE-SVC chain', command: `${NAT} | grep "^-A $chain "` },
        { label: 'Only the probabilities', command: `${NAT} | grep "^-A $chain " | grep -o 'probability [0-9.]*'` },
        ...recordSnippets(NS, 'web-probabilities', { probabilities: '<p1> <p2>' }, 'Write them down'),
      ],
      hints: [
        'Rules in a chain are tried top to bottom; a rule with `-m statistic --mode random --probability p` matches a fraction p of the packets that reach it.',
        'With three endpoints there are two probabilities; the third rule has none and catches everything that is left.',
        'Record them in order, separated by a space: `probabilities="0.33333333349 0.50000000000"` if that is what you see, then write them down.',
      ],
      solution: {
        commands: [
          waitForWebRules(NS, 'iptables'),
          `${NAT} | grep "^-A ${SVC_CHAIN} "`,
          ...recordSteps(NS, 'web-probabilities', { probabilities: PROBS }),
        ],
        explanation: "`$NF` of the KUBE-SERVICES rule is the chain it jumps to; the chain's `--probability` values are the answer.",
      },
      check: probabilitiesCheck,
    },
    {
      id: 'scale-and-count',
      title: `Scale web to ${SCALED} and count its rules`,
      instructions: labText(ID, 'steps/scale-and-count.md'),
      concepts: ['I2', 'I4', 'I6'],
      snippets: [
        { label: 'Count before', command: `docker exec ${NODE} iptables-save | grep -c '${NS}/web'` },
        {
          label: `Scale to ${SCALED}`,
          command: `kubectl -n ${NS} scale deployment web --replicas=${SCALED} && kubectl -n ${NS} rollout status deployment web`,
        },
        NAME_CHAIN,
        { label: 'The chain now', command: `${NAT} | grep "^-A $chain "` },
        { label: 'Count after', command: `docker exec ${NODE} iptables-save | grep -c '${NS}/web'` },
        { label: 'All KUBE rules on the node', command: `docker exec ${NODE} iptables-save | grep -c '^-A KUBE'` },
        ...recordSnippets(NS, 'web-rules', { count: '<count>' }, 'Write the count down'),
      ],
      hints: [
        `\`kubectl -n ${NS} scale deployment web --replicas=${SCALED}\`, then wait for the pods to be ready: only ready pods become endpoints, and only endpoints get rules.`,
        `With ${SCALED} endpoints the probabilities become 1/5, 1/4, 1/3, 1/2 and a last rule without one.`,
        `Count the lines that name web: \`docker exec ${NODE} iptables-save | grep -c '${NS}/web'\`, and record it in a ConfigMap \`web-rules\`, key \`count\`.`,
      ],
      solution: {
        commands: [
          `kubectl -n ${NS} scale deployment web --replicas=${SCALED}`,
          `kubectl -n ${NS} rollout status deployment web --timeout=180s`,
          'sleep 3',
          `${NAT} | grep "^-A ${SVC_CHAIN} "`,
          ...recordSteps(NS, 'web-rules', { count: COUNT }),
        ],
        explanation: 'The short sleep gives kube-proxy time to rewrite the chains after the last pod turns ready.',
      },
      check: scaleCheck,
    },
    {
      id: 'conntrack',
      title: 'Find the conntrack entries of your connections',
      instructions: labText(ID, 'steps/conntrack.md'),
      concepts: ['I5'],
      snippets: [
        { label: 'Send ten requests', command: REQUESTS },
        { label: 'Which node is the client on?', command: `kubectl -n ${NS} get pod client -o wide` },
        { label: 'Entries to the ClusterIP', command: `docker exec ${CLIENT_NODE} conntrack -L -d ${CLUSTER_IP}` },
        {
          label: 'How full is the table?',
          command: `docker exec ${CLIENT_NODE} cat /proc/sys/net/netfilter/nf_conntrack_count /proc/sys/net/netfilter/nf_conntrack_max`,
        },
        { label: 'Per-CPU statistics (drops, insert failures)', command: `docker exec ${CLIENT_NODE} conntrack -S` },
        ...recordSnippets(NS, 'conntrack', { max: '<max>' }, 'Write the maximum down'),
      ],
      hints: [
        'The DNAT happens on the node where the client pod runs, so that node holds the entries: `kubectl get pod client -o wide` tells you which.',
        '`conntrack -L -d <ClusterIP>` lists entries whose original destination is the ClusterIP; the second `src=` on each line is the pod that really answered.',
        `Closed connections stay as TIME_WAIT for about two minutes: send requests again just before you Check. Record \`nf_conntrack_max\` in a ConfigMap \`conntrack\`, key \`max\`.`,
      ],
      solution: {
        commands: [REQUESTS, `docker exec ${CLIENT_NODE} conntrack -L -d ${CLUSTER_IP}`, ...recordSteps(NS, 'conntrack', { max: CT_MAX })],
        explanation: 'Each request opened a new TCP connection, so each left one entry; its reply direction names the pod the DNAT chose.',
      },
      check: conntrackCheck,
    },
  ],
});
