/**
 * sessionAffinity: ClientIP on the iptables and IPVS clusters: set it, see one client stick to
 * one pod, and find how each dataplane remembers the client (`-m recent` / `persistent`).
 */
import { recordSnippets, recordSteps } from '../../scripts/labs/checks/answer.ts';
import { defineLab } from '../../scripts/labs/schema.ts';
import { labText } from '../../scripts/labs/text.ts';
import { affinityRulesCheck, CURL_LOOP, onePodCheck, setAffinityCheck } from './checks.ts';
import { WEB_AND_CLIENT, clientNode } from '../_shared/workload.ts';
import { iptablesServiceRules } from '../_shared/iptables-service.ts';

const ID = 'session-affinity';
const NS = 'lab-session-affinity';
const NODE = '"$DPLAB_CLUSTER-worker"';
/** Affinity memory is per node: the client's node holds its entries. */
const CLIENT_NODE = clientNode(NS);
const PATCH = `kubectl -n ${NS} patch service web -p '{"spec":{"sessionAffinity":"ClientIP"}}'`;
const LOOP = `kubectl -n ${NS} exec client -- sh -c '${CURL_LOOP}'`;
const CLUSTER_IP = `$(kubectl -n ${NS} get service web -o jsonpath='{.spec.clusterIP}')`;
/** The recent-module rules of web's chains (found from its KUBE-SVC chain: their comments go in large cluster mode). */
const IPT_RECENT = `docker exec ${NODE} iptables-save -t nat | ${iptablesServiceRules(NS, 'web', 'chains')} | grep recent`;
const IPVS_PROC = `docker exec ${NODE} cat /proc/net/ip_vs`;
const SECONDS_IPT = `$(${IPT_RECENT} | grep -o 'seconds [0-9]*' | sed -n 1p | cut -d' ' -f2)`;

export default defineLab({
  id: ID,
  title: 'Session affinity: one client, one pod',
  summary:
    'Turn on sessionAffinity: ClientIP for web, watch every request from one client land on the same pod, and find how iptables (-m recent) or IPVS (persistent) remembers the client.',
  modes: ['iptables', 'ipvs'],
  minutes: 15,
  concepts: ['T5'],
  namespace: NS,
  setup: WEB_AND_CLIENT,
  steps: [
    {
      id: 'set-affinity',
      title: 'Set sessionAffinity: ClientIP on web',
      instructions: labText(ID, 'steps/set-affinity.md'),
      concepts: ['T5'],
      snippets: [
        { label: 'Before: ten requests, several pods', command: LOOP },
        { label: 'Turn affinity on', command: PATCH },
        {
          label: 'What the Service says now',
          command: `kubectl -n ${NS} get service web -o jsonpath='{.spec.sessionAffinity} {.spec.sessionAffinityConfig}{"\\n"}'`,
        },
      ],
      hints: [
        'Session affinity is a field of the Service spec, `sessionAffinity`, with the values `None` (default) and `ClientIP`.',
        `\`${PATCH}\``,
        'Leave `sessionAffinityConfig` alone: the API server fills in the default timeout.',
      ],
      solution: {
        commands: [PATCH],
        explanation:
          'A strategic merge patch changes just that field; the API server adds `sessionAffinityConfig.clientIP.timeoutSeconds: 10800`.',
      },
      check: setAffinityCheck,
    },
    {
      id: 'one-pod-answers',
      title: 'See one pod answer every request',
      instructions: labText(ID, 'steps/one-pod-answers.md'),
      concepts: ['T5'],
      snippets: [
        { label: 'Ten requests from the client', command: LOOP },
        { label: 'Which pod is that, and where?', command: `kubectl -n ${NS} get pods -l app=web -o wide` },
        ...recordSnippets(NS, 'affinity-pod', { pod: '<pod name>' }, 'Write down the pod'),
      ],
      hints: [
        'Each curl is a new TCP connection; without affinity each one is balanced independently.',
        'With ClientIP affinity all ten answers should carry the same pod name. If they do not, check that step 1 is done and kube-proxy has caught up.',
      ],
      solution: {
        commands: [
          LOOP,
          ...recordSteps(NS, 'affinity-pod', { pod: `$(kubectl -n ${NS} exec client -- curl -sS --max-time 2 http://web/hostname)` }),
        ],
        explanation: 'The check runs the same loop from the client pod, counts the pod names, and compares the one you wrote down.',
      },
      check: onePodCheck,
    },
    {
      id: 'find-affinity-rules',
      title: 'Find how the node remembers the client',
      instructions: labText(ID, 'steps/find-affinity-rules.md'),
      concepts: ['T5'],
      snippets: [
        { label: 'The recent-module rules', command: IPT_RECENT, modes: ['iptables'] },
        {
          label: "The kernel's memory of clients, on the client's node",
          command: `docker exec ${CLIENT_NODE} sh -c 'ls /proc/net/xt_recent/ && cat /proc/net/xt_recent/KUBE-SEP-*'`,
          modes: ['iptables'],
        },
        { label: 'The virtual servers, in hex', command: IPVS_PROC, modes: ['ipvs'] },
        {
          label: 'With ipvsadm, where it is installed (the ipvs-inspect lab puts it in the first worker; its reset takes it out again)',
          command: `docker exec ${NODE} ipvsadm -Ln -t ${CLUSTER_IP}:80`,
          modes: ['ipvs'],
        },
        {
          label: "Persistence templates and connections, on the client's node (the kernel's table, in hex)",
          command: `docker exec ${CLIENT_NODE} cat /proc/net/ip_vs_conn`,
          modes: ['ipvs'],
        },
        ...recordSnippets(NS, 'affinity', { seconds: '<seconds>' }, 'Write down the timeout'),
      ],
      hints: [
        "iptables: look for `-m recent --rcheck --seconds …` in web's KUBE-SVC chain. IPVS: look for `persistent …` on web's virtual server.",
        "/proc/net/ip_vs counts persistence in kernel ticks (jiffies); divide by the kernel's HZ (often 250) or use `ipvsadm -Ln`, which prints seconds.",
        'Record the number of seconds, e.g. `seconds="10800"`, then write it down.',
      ],
      solution: {
        commands: [IPT_RECENT, ...recordSteps(NS, 'affinity', { seconds: SECONDS_IPT })],
        byMode: {
          ipvs: [
            IPVS_PROC,
            ...recordSteps(NS, 'affinity', {
              seconds: `$(kubectl -n ${NS} get service web -o jsonpath='{.spec.sessionAffinityConfig.clientIP.timeoutSeconds}')`,
            }),
          ],
        },
        explanation:
          "The node enforces the Service's `sessionAffinityConfig.clientIP.timeoutSeconds`: 10800 s unless you set another value.",
      },
      check: affinityRulesCheck,
    },
  ],
});
