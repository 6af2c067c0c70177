/**
 * internalTrafficPolicy: Local with a node-local agent: first one agent pod on one worker (the
 * far client's node has none and drops), then the agent as a DaemonSet (every client is served
 * on its own node).
 */
import { defineLab } from '../../scripts/labs/schema.ts';
import { labText } from '../../scripts/labs/text.ts';
import { CURL_LOOP, everywhereCheck, exposeCheck, setLocalCheck } from './checks.ts';
import { AGNHOST } from '../_shared/workload.ts';
import { iptablesServiceRules } from '../_shared/iptables-service.ts';

const ID = 'internal-traffic-local';
const NS = 'lab-internal-traffic-local';
const FROM = (client: string) => `kubectl -n ${NS} exec ${client} -- sh -c '${CURL_LOOP}'`;
const PATCH = `kubectl -n ${NS} patch service agent -p '{"spec":{"internalTrafficPolicy":"Local"}}'`;
/**
 * agent's rules on a node: the filter table's "has no local endpoints" DROP (kube-proxy writes it
 * where Local leaves no endpoint), then agent's own KUBE-SVL chain and its KUBE-SEP chains in nat,
 * found from its cluster-IP rule, so it shows the same with leftover Services of other labs.
 */
const NAT_AGENT = (node: string) =>
  `docker exec "$DPLAB_CLUSTER-${node}" iptables-save -t filter | grep -F '"${NS}/agent'; ` +
  `docker exec "$DPLAB_CLUSTER-${node}" iptables-save -t nat | ${iptablesServiceRules(NS, 'agent', 'chains')}`;

export default defineLab({
  id: ID,
  title: 'internalTrafficPolicy: Local and a node-local agent',
  summary:
    'Keep in-cluster traffic on the client’s own node with internalTrafficPolicy: Local: see a node without an agent pod drop the requests, then run the agent as a DaemonSet so every node serves its own clients.',
  modes: ['iptables'],
  minutes: 20,
  concepts: ['T4'],
  namespace: NS,
  setup: {
    manifests: ['manifests/agent-deployment.yaml', 'manifests/clients.yaml'],
    workspace: ['manifests/agent-service.yaml', 'manifests/agent-daemonset.yaml', 'manifests/agent-deployment.yaml'],
    images: [AGNHOST],
  },
  steps: [
    {
      id: 'expose-agent',
      title: 'Put a Service in front of the agent',
      instructions: labText(ID, 'steps/expose-agent.md'),
      concepts: ['T4'],
      snippets: [
        { label: 'Where does everything run?', command: `kubectl -n ${NS} get pods -o wide` },
        { label: 'Create the Service', command: `kubectl -n ${NS} apply -f internal-traffic-local/agent-service.yaml` },
        { label: 'From the near client', command: FROM('client-near') },
        { label: 'From the far client', command: FROM('client-far') },
      ],
      hints: [
        'The manifest is in your workspace: `cat internal-traffic-local/agent-service.yaml`.',
        `\`kubectl -n ${NS} apply -f internal-traffic-local/agent-service.yaml\`, then ask from both clients.`,
      ],
      solution: {
        commands: [
          `kubectl -n ${NS} apply -f internal-traffic-local/agent-service.yaml`,
          'sleep 3',
          FROM('client-near'),
          FROM('client-far'),
        ],
      },
      check: exposeCheck,
    },
    {
      id: 'set-local',
      title: 'Set internalTrafficPolicy: Local',
      instructions: labText(ID, 'steps/set-local.md'),
      concepts: ['T4'],
      snippets: [
        { label: 'Make it Local', command: PATCH },
        { label: 'From the near client', command: FROM('client-near') },
        { label: 'From the far client (watch it time out)', command: FROM('client-far') },
        { label: 'Rules on the agent’s node', command: NAT_AGENT('worker') },
        { label: 'Rules on the other worker', command: NAT_AGENT('worker2') },
      ],
      hints: [
        '`internalTrafficPolicy` is a field of the Service spec: `Cluster` (default) or `Local`.',
        `\`${PATCH}\``,
        'client-far should now time out: its node has no agent pod, and Local forbids using one elsewhere.',
      ],
      solution: { commands: [PATCH, 'sleep 3', FROM('client-near'), `${FROM('client-far')} || true`] },
      check: setLocalCheck,
    },
    {
      id: 'agent-everywhere',
      title: 'Run the agent on every node',
      instructions: labText(ID, 'steps/agent-everywhere.md'),
      concepts: ['T4'],
      snippets: [
        { label: 'Read the DaemonSet', command: 'cat internal-traffic-local/agent-daemonset.yaml' },
        {
          label: 'Swap the Deployment for the DaemonSet',
          command: `kubectl -n ${NS} delete deployment agent && kubectl -n ${NS} apply -f internal-traffic-local/agent-daemonset.yaml`,
        },
        { label: 'Wait for it', command: `kubectl -n ${NS} rollout status daemonset agent --timeout=120s` },
        { label: 'From both clients', command: `${FROM('client-near')}; ${FROM('client-far')}` },
      ],
      hints: [
        'A DaemonSet runs one pod per eligible node; the kind control plane is tainted, so here that is one per worker.',
        'Keep the label `app: agent`, so the Service selects the new pods. Delete the Deployment, or its pod stays as a second agent on the first worker.',
      ],
      solution: {
        commands: [
          `kubectl -n ${NS} delete deployment agent --ignore-not-found`,
          `kubectl -n ${NS} apply -f internal-traffic-local/agent-daemonset.yaml`,
          `kubectl -n ${NS} rollout status daemonset agent --timeout=180s`,
          'sleep 3',
          FROM('client-near'),
          FROM('client-far'),
        ],
      },
      check: everywhereCheck,
    },
  ],
});
