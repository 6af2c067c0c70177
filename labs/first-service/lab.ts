/** Lab 1: a Deployment, a ClusterIP Service, its EndpointSlices, and who forwards the traffic. */
import { MODES, type Mode } from '../../scripts/catalogue/modes.ts';
import { allOf, deploymentReady, readyEndpoints, serviceSpec } from '../../scripts/labs/checks/index.ts';
import { defineLab } from '../../scripts/labs/schema.ts';
import { labText } from '../../scripts/labs/text.ts';
import { proxyModeCheck, reachWebCheck } from './checks.ts';
import { AGNHOST, clientNode, WEB_AND_CLIENT_TO_APPLY, waitForWebRules } from '../_shared/workload.ts';
import { nameAnswer, recordSnippets } from '../../scripts/labs/checks/answer.ts';
const ID = 'first-service';
const NS = 'lab-first-service';
const KUBE_PROXY_MODE = 'docker exec "$DPLAB_CLUSTER-control-plane" curl -s http://127.0.0.1:10249/proxyMode';
const CILIUM_KPR = 'kubectl -n kube-system exec ds/cilium -c cilium-agent -- cilium-dbg status | grep KubeProxyReplacement';
/** The answer kept in `mode` first; then any earlier answer deleted, so the solution can run twice; then recorded. */
const record = (value: string) => [
  nameAnswer('mode', value),
  `kubectl -n ${NS} delete configmap proxy-mode --ignore-not-found`,
  `kubectl -n ${NS} create configmap proxy-mode --from-literal=mode="$mode"`,
];

/** Start the client, wait until the client's node has web's rules, then ask six times. */
const reachWeb = (mode: Mode) => [
  `kubectl -n ${NS} apply -f first-service/client.yaml`,
  `kubectl -n ${NS} wait --for=condition=Ready pod/client --timeout=120s`,
  waitForWebRules(NS, mode, { node: clientNode(NS) }),
  `for i in 1 2 3 4 5 6; do kubectl -n ${NS} exec client -- curl -s http://web/hostname; echo; done`,
];

export default defineLab({
  id: ID,
  title: 'Your first Service',
  summary:
    'Run three web pods, put a ClusterIP Service in front of them, watch requests spread over the pods, and find out what on the node does the forwarding.',
  modes: [...MODES],
  minutes: 15,
  concepts: ['S2', 'S3'],
  namespace: NS,
  setup: WEB_AND_CLIENT_TO_APPLY,
  steps: [
    {
      id: 'deploy-web',
      title: 'Run three web pods',
      instructions: labText(ID, 'steps/deploy-web.md'),
      snippets: [
        { label: 'Read the manifest', command: 'cat first-service/web-deployment.yaml' },
        { label: 'Apply it', command: `kubectl -n ${NS} apply -f first-service/web-deployment.yaml` },
        {
          label: 'Or create it imperatively',
          command: `kubectl -n ${NS} create deployment web --image=${AGNHOST} --replicas=3 -- /agnhost netexec --http-port=8080`,
        },
        { label: 'Watch the pods start', command: `kubectl -n ${NS} get pods -o wide` },
      ],
      hints: [
        'A Deployment keeps a number of identical pods running. The manifest in your workspace already says 3 replicas.',
        `\`kubectl -n ${NS} apply -f first-service/web-deployment.yaml\` creates it; \`kubectl -n ${NS} get pods\` shows the pods starting.`,
        'The first start pulls the agnhost image; give it up to a minute, then Check again.',
      ],
      solution: {
        commands: [
          `kubectl -n ${NS} apply -f first-service/web-deployment.yaml`,
          `kubectl -n ${NS} rollout status deployment/web --timeout=180s`,
        ],
        explanation: '`apply` creates the Deployment; `rollout status` waits until all three replicas are ready.',
      },
      check: deploymentReady('web', { replicas: 3, image: AGNHOST, runs: 'netexec' }),
    },
    {
      id: 'expose-web',
      title: 'Expose web as a ClusterIP Service',
      instructions: labText(ID, 'steps/expose-web.md'),
      concepts: ['S2'],
      snippets: [
        { label: 'Create the Service', command: `kubectl -n ${NS} expose deployment web --port=80 --target-port=8080` },
        { label: 'Or apply the manifest', command: `kubectl -n ${NS} apply -f first-service/web-service.yaml` },
        { label: 'See its ClusterIP', command: `kubectl -n ${NS} get service web` },
        { label: 'List its EndpointSlices', command: `kubectl -n ${NS} get endpointslices -l kubernetes.io/service-name=web -o wide` },
      ],
      hints: [
        "`kubectl expose deployment web` builds a Service whose selector is the Deployment's own (`app=web`).",
        "The Service listens on `--port=80` and sends traffic to the pods' `--target-port=8080`.",
        'EndpointSlices carry the label `kubernetes.io/service-name=web`; list them with `-l`.',
      ],
      solution: {
        commands: [`kubectl -n ${NS} apply -f first-service/web-service.yaml`],
        explanation:
          'The manifest is what `kubectl expose deployment web --port=80 --target-port=8080` would create; `apply` can be run again safely.',
      },
      check: allOf({
        service: serviceSpec('web', { type: 'ClusterIP', ports: [{ port: 80, targetPort: 8080 }], selector: { app: 'web' } }),
        endpoints: readyEndpoints('web', 3),
      }),
    },
    {
      id: 'reach-web',
      title: 'Reach web from a client pod',
      instructions: labText(ID, 'steps/reach-web.md'),
      concepts: ['S2'],
      snippets: [
        { label: 'Start the client pod', command: `kubectl -n ${NS} apply -f first-service/client.yaml` },
        { label: 'Wait until it is ready', command: `kubectl -n ${NS} wait --for=condition=Ready pod/client --timeout=120s` },
        {
          label: 'Ask web who answers, six times',
          command: `for i in 1 2 3 4 5 6; do kubectl -n ${NS} exec client -- curl -s http://web/hostname; echo; done`,
        },
      ],
      hints: [
        'The client pod has curl; `kubectl exec client -- <command>` runs a command inside it.',
        'Inside the namespace, the Service is reachable by its short name: `http://web/hostname`.',
        'If curl cannot resolve `web`, check that the client runs in the same namespace as the Service.',
      ],
      solution: {
        // kube-proxy writes the new Service's rules a moment after it exists (seen on the real
        // kube-proxy of the sim provider: the first curl was refused), so wait for them.
        commands: reachWeb('ipvs'),
        byMode: { iptables: reachWeb('iptables'), nftables: reachWeb('nftables') },
      },
      check: reachWebCheck,
    },
    {
      id: 'proxy-mode',
      title: 'Find out what forwards the traffic',
      instructions: labText(ID, 'steps/proxy-mode.md'),
      concepts: ['S3'],
      snippets: [
        { label: 'Ask kube-proxy on a node for its mode', command: KUBE_PROXY_MODE, modes: ['iptables', 'ipvs', 'nftables'] },
        {
          label: 'See the kube-proxy DaemonSet',
          command: 'kubectl -n kube-system get daemonset kube-proxy',
          modes: ['iptables', 'ipvs', 'nftables'],
        },
        ...recordSnippets(NS, 'proxy-mode', { mode: '<mode>' }, 'Record your answer', ['iptables', 'ipvs', 'nftables']),
        { label: 'No kube-proxy here', command: 'kubectl -n kube-system get daemonset kube-proxy', modes: ['cilium'] },
        { label: 'Ask the Cilium agent instead', command: CILIUM_KPR, modes: ['cilium'] },
        ...recordSnippets(NS, 'proxy-mode', { mode: '<value>' }, 'Record your answer', ['cilium']),
      ],
      hints: [
        'kube-proxy serves `/proxyMode` on 127.0.0.1:10249 inside each node; `docker exec` gets you inside a node.',
        'On the Cilium cluster, `cilium-dbg status` runs inside the cilium agent pod: `kubectl -n kube-system exec ds/cilium -c cilium-agent -- cilium-dbg status`.',
        'Type what you saw as `mode="…"`, then record it with the last snippet.',
      ],
      solution: {
        commands: [KUBE_PROXY_MODE, ...record(`$(${KUBE_PROXY_MODE})`)],
        byMode: {
          cilium: [
            CILIUM_KPR,
            ...record(
              `$(kubectl -n kube-system exec ds/cilium -c cilium-agent -- cilium-dbg status | awk '/^KubeProxyReplacement:/ {print $2}')`,
            ),
          ],
        },
        explanation:
          'The first command asks the node; the next keeps its answer in `mode`, and the last one stores it where the check can read it (deleting any earlier answer first, so it can be run twice).',
      },
      check: proxyModeCheck,
    },
  ],
});
