/**
 * Core exercise 3: a kind cluster without kube-proxy, where Cilium's eBPF programs implement
 * Services. Confirm KubeProxyReplacement, find web in the agent's service table, see that no
 * kube-proxy rules exist in iptables, and watch web's flows in Hubble.
 */
import { allOf, deploymentReady, serviceRules, serviceSpec } from '../../scripts/labs/checks/index.ts';
import { parse } from '../../scripts/dataplane/index.ts';
import { defineLab } from '../../scripts/labs/schema.ts';
import { labText } from '../../scripts/labs/text.ts';
import { hubbleCheck, kprCheck, noKubeRulesCheck } from './checks.ts';
import { AGNHOST, WEB_AND_CLIENT_TO_APPLY } from '../_shared/workload.ts';
import { recordSnippets, recordSteps } from '../../scripts/labs/checks/answer.ts';

const ID = 'cilium-kpr';
const NS = 'lab-cilium-kpr';
const AGENT = 'kubectl -n kube-system exec ds/cilium -c cilium-agent --';
const KPR_VALUE = `$(${AGENT} cilium-dbg status | awk '/^KubeProxyReplacement:/ {print $2}')`;
/**
 * Relay first, then the port-forward in the background, then observe: `&` must background only
 * the port-forward (a bare `enable && port-forward &` would background the enable too, and
 * `hubble observe` would run before Relay exists).
 */
export const RELAY_OBSERVE = `cilium hubble enable && { cilium hubble port-forward & sleep 5; } && hubble observe --from-pod ${NS}/client --to-pod ${NS}/web- --last 20`;
const KUBE_SVC_COUNT = 'docker exec "$DPLAB_CLUSTER-worker" sh -c \'iptables-save | grep -c KUBE-SVC || true\'';

export default defineLab({
  id: ID,
  title: 'Cilium without kube-proxy',
  summary:
    "On a cluster with no kube-proxy at all, confirm that Cilium replaces it, find the web Service in the agent's eBPF service table, check that iptables holds no Service rules, and watch web's flows in Hubble.",
  modes: ['cilium'],
  minutes: 20,
  concepts: ['E1', 'E2', 'E4'],
  namespace: NS,
  setup: WEB_AND_CLIENT_TO_APPLY,
  steps: [
    {
      id: 'who-forwards',
      title: 'Confirm that Cilium replaces kube-proxy',
      instructions: labText(ID, 'steps/who-forwards.md'),
      concepts: ['E2'],
      snippets: [
        { label: 'Is there a kube-proxy?', command: 'kubectl -n kube-system get daemonsets' },
        { label: 'Ask the Cilium agent', command: `${AGENT} cilium-dbg status` },
        { label: 'Just the line that matters', command: `${AGENT} cilium-dbg status | grep KubeProxyReplacement` },
        { label: 'The details', command: `${AGENT} cilium-dbg status --verbose | sed -n '/KubeProxyReplacement Details/,/^$/p'` },
        ...recordSnippets(NS, 'kpr', { KubeProxyReplacement: '<value>' }, 'Record your answer'),
      ],
      hints: [
        '`kubectl -n kube-system get daemonsets` lists `cilium` but no `kube-proxy`: the cluster was created with `kubeProxyMode: none`.',
        "`cilium-dbg` is the agent's own debug tool; it runs inside the agent container: `kubectl -n kube-system exec ds/cilium -c cilium-agent -- cilium-dbg status`.",
        'Type the value after `KubeProxyReplacement:` as `kube_proxy_replacement`, then record it: it goes into ConfigMap `kpr`, key `KubeProxyReplacement`.',
      ],
      solution: {
        commands: [
          'kubectl -n kube-system get daemonsets',
          `${AGENT} cilium-dbg status | grep KubeProxyReplacement`,
          ...recordSteps(NS, 'kpr', { KubeProxyReplacement: KPR_VALUE }),
        ],
        explanation:
          'The agent reports `KubeProxyReplacement: True` and lists the devices its eBPF NodePort programs attach to; no kube-proxy DaemonSet exists.',
      },
      check: kprCheck,
    },
    {
      id: 'service-list',
      title: "Find web in the agent's service table",
      instructions: labText(ID, 'steps/service-list.md'),
      concepts: ['E1', 'E2'],
      snippets: [
        {
          label: 'Run web and its Service',
          command: `kubectl -n ${NS} apply -f cilium-kpr/web-deployment.yaml -f cilium-kpr/web-service.yaml`,
        },
        { label: 'Its ClusterIP and pods', command: `kubectl -n ${NS} get service web; kubectl -n ${NS} get pods -l app=web -o wide` },
        { label: "The agent's service table", command: `${AGENT} cilium-dbg service list` },
        {
          label: "Only web's rows",
          command: `${AGENT} cilium-dbg service list | grep -A2 "$(kubectl -n ${NS} get service web -o jsonpath='{.spec.clusterIP}')"`,
        },
        { label: 'The eBPF map behind it', command: `${AGENT} cilium-dbg bpf lb list` },
      ],
      hints: [
        'Apply both manifests from your workspace, then wait for the three pods to be ready.',
        '`cilium-dbg service list` prints one row per frontend (address:port) and one line per backend under it.',
        'Look for the ClusterIP that `kubectl get service web` shows, with three pod addresses on port 8080 as backends.',
      ],
      solution: {
        commands: [
          `kubectl -n ${NS} apply -f cilium-kpr/web-deployment.yaml -f cilium-kpr/web-service.yaml`,
          `kubectl -n ${NS} rollout status deployment/web --timeout=180s`,
          `${AGENT} cilium-dbg service list`,
        ],
        explanation:
          'The agent watched the Service and its EndpointSlices and wrote a frontend with three backends into its eBPF load-balancing maps.',
      },
      check: allOf({
        deployment: deploymentReady('web', { replicas: 3, image: AGNHOST, runs: 'netexec' }),
        service: serviceSpec('web', { type: 'ClusterIP', ports: [{ port: 80, targetPort: 8080 }], selector: { app: 'web' } }),
        rules: serviceRules('web', { backends: 3 }, parse),
      }),
    },
    {
      id: 'no-kube-rules',
      title: 'Look for Service rules in iptables',
      instructions: labText(ID, 'steps/no-kube-rules.md'),
      concepts: ['E2'],
      snippets: [
        { label: 'Count KUBE-SVC lines on a worker', command: KUBE_SVC_COUNT },
        {
          label: 'What Cilium keeps in iptables',
          command: 'docker exec "$DPLAB_CLUSTER-worker" sh -c \'iptables-save | grep -E "^:CILIUM_"\'',
        },
        ...recordSnippets(NS, 'kube-svc-rules', { count: '<count>' }, 'Record the count'),
      ],
      hints: [
        'Nodes are Docker containers: `docker exec "$DPLAB_CLUSTER-worker" iptables-save` prints that node\'s whole iptables ruleset.',
        '`grep -c KUBE-SVC` counts the matching lines; it prints 0 (and exits 1) when there are none, so add `|| true` in scripts.',
        `Store the number in ConfigMap \`kube-svc-rules\`, key \`count\`.`,
      ],
      solution: {
        commands: [KUBE_SVC_COUNT, ...recordSteps(NS, 'kube-svc-rules', { count: `$(${KUBE_SVC_COUNT})` })],
        explanation:
          'The count is 0: without kube-proxy nobody writes KUBE-SERVICES or KUBE-SVC chains. The few `CILIUM_` chains handle masquerading and proxy redirects, not Service load balancing.',
      },
      check: noKubeRulesCheck,
    },
    {
      id: 'hubble-flows',
      title: "Watch web's flows in Hubble",
      instructions: labText(ID, 'steps/hubble-flows.md'),
      concepts: ['E1', 'E4'],
      snippets: [
        {
          label: 'Start the client pod',
          command: `kubectl -n ${NS} apply -f cilium-kpr/client.yaml && kubectl -n ${NS} wait --for=condition=Ready pod/client --timeout=120s`,
        },
        {
          label: 'Send a few requests',
          command: `for i in 1 2 3 4 5; do kubectl -n ${NS} exec client -- curl -s http://web/hostname; echo; done`,
        },
        {
          label: "Flows from client to web's pods, in an agent",
          command: `${AGENT} hubble observe --from-pod ${NS}/client --to-pod ${NS}/web- --last 20`,
        },
        { label: 'Or cluster-wide through Hubble Relay (needs the hubble CLI on your machine)', command: RELAY_OBSERVE },
      ],
      hints: [
        'Flows only exist once something talks to web: start the client pod and send a few requests first.',
        `Each agent sees only its own node's flows. \`${AGENT} hubble observe …\` asks one agent; if it shows nothing, the client may run on another node: pick that node's agent pod (\`kubectl -n kube-system get pods -l k8s-app=cilium -o wide\`).`,
        "Look at the first packet's destination: a web pod on port 8080, never the ClusterIP on port 80. The backend was chosen at connect(), before any packet existed.",
      ],
      solution: {
        commands: [
          `kubectl -n ${NS} apply -f cilium-kpr/client.yaml`,
          `kubectl -n ${NS} wait --for=condition=Ready pod/client --timeout=120s`,
          `for i in 1 2 3 4 5; do kubectl -n ${NS} exec client -- curl -s http://web/hostname; echo; done`,
          `${AGENT} hubble observe --from-pod ${NS}/client --to-pod ${NS}/web- --last 20`,
        ],
        explanation:
          "Hubble reads Cilium's flow events. `--from-pod` and `--to-pod` (name prefixes) keep the packets from client to web's pods; their first packet already goes to a pod address, because the socket-level load balancer rewrote the ClusterIP at connect().",
      },
      check: hubbleCheck,
    },
  ],
});
