/**
 * L7 policy with Cilium: a CiliumNetworkPolicy that admits only GET /api/v1/.* from frontend
 * to api on port 8080. Requests are answered or refused by Cilium's Envoy proxy; pods the
 * policy does not name are dropped before any HTTP happens, and Hubble shows both.
 */
import { defineLab } from '../../scripts/labs/schema.ts';
import { labText } from '../../scripts/labs/text.ts';
import { baselineCheck, dropsCheck, l7Check } from './checks.ts';
import { AGNHOST } from '../_shared/workload.ts';

const ID = 'cilium-l7-policy';
const NS = 'lab-cilium-l7-policy';
const AGENT = 'kubectl -n kube-system exec ds/cilium -c cilium-agent --';
const curl = (pod: string, method: string, path: string) =>
  `kubectl -n ${NS} exec ${pod} -- curl -s -w ' [%{http_code}]\\n' --max-time 3 -X ${method} http://api:8080${path}`;

export default defineLab({
  id: ID,
  title: 'HTTP-aware policy with Cilium',
  summary:
    "Allow only GET /api/v1/… from the frontend to the api pods with a CiliumNetworkPolicy, watch Cilium's proxy refuse everything else, and find the drops in Hubble.",
  modes: ['cilium'],
  minutes: 20,
  concepts: ['E5', 'E4'],
  namespace: NS,
  setup: {
    manifests: ['manifests/api.yaml'],
    workspace: ['manifests/frontend.yaml', 'manifests/other.yaml', 'manifests/api-l7-policy.yaml'],
    images: [AGNHOST],
  },
  steps: [
    {
      id: 'baseline',
      title: 'Call api from the frontend, before any policy',
      instructions: labText(ID, 'steps/baseline.md'),
      concepts: ['E5'],
      snippets: [
        { label: 'The api pods and Service', command: `kubectl -n ${NS} get pods,services -o wide` },
        {
          label: 'Start the frontend pod',
          command: `kubectl -n ${NS} rollout status deployment/api --timeout=120s && kubectl -n ${NS} apply -f cilium-l7-policy/frontend.yaml && kubectl -n ${NS} wait --for=condition=Ready pod/frontend --timeout=120s`,
        },
        { label: 'GET /hostname', command: curl('frontend', 'GET', '/hostname') },
        { label: 'GET /api/v1/hostname', command: curl('frontend', 'GET', '/api/v1/hostname') },
        { label: 'POST /api/v1/hostname', command: curl('frontend', 'POST', '/api/v1/hostname') },
      ],
      hints: [
        'The frontend pod is in your workspace: `cilium-l7-policy/frontend.yaml`. It carries the label `app=frontend`.',
        "`kubectl exec frontend -- curl …` runs curl inside it; `-w ' [%{http_code}]'` prints the status code after the body.",
      ],
      solution: {
        commands: [
          // On a cluster that has only just started, the api pods of the lab's setup may not be Ready yet.
          `kubectl -n ${NS} rollout status deployment/api --timeout=120s`,
          `kubectl -n ${NS} apply -f cilium-l7-policy/frontend.yaml`,
          `kubectl -n ${NS} wait --for=condition=Ready pod/frontend --timeout=120s`,
          curl('frontend', 'GET', '/hostname'),
        ],
        explanation: 'No policy selects the api pods yet, so Cilium allows all traffic to them.',
      },
      check: baselineCheck,
    },
    {
      id: 'l7-policy',
      title: 'Allow only GET /api/v1/.* from the frontend',
      instructions: labText(ID, 'steps/l7-policy.md'),
      concepts: ['E5'],
      snippets: [
        { label: 'Read the policy', command: 'cat cilium-l7-policy/api-l7-policy.yaml' },
        { label: 'Apply it', command: `kubectl -n ${NS} apply -f cilium-l7-policy/api-l7-policy.yaml` },
        { label: 'Allowed: GET /api/v1/…', command: curl('frontend', 'GET', '/api/v1/hostname') },
        { label: 'Refused: another path', command: curl('frontend', 'GET', '/hostname') },
        { label: 'Refused: another method', command: curl('frontend', 'POST', '/api/v1/hostname') },
        { label: 'The policy as the agent sees it', command: `${AGENT} cilium-dbg policy get` },
      ],
      hints: [
        `The policy is ready in your workspace; \`kubectl -n ${NS} apply -f cilium-l7-policy/api-l7-policy.yaml\` creates it in the lab's namespace (\`kubectl -n ${NS} get cnp\` lists it).`,
        "A refused request still gets an HTTP answer: `403` with the body `Access denied`, written by Cilium's Envoy proxy, not by api.",
        'The first request after applying may take a second while the proxy gets its configuration; try again.',
      ],
      solution: {
        commands: [
          `kubectl -n ${NS} apply -f cilium-l7-policy/api-l7-policy.yaml`,
          'sleep 3',
          curl('frontend', 'GET', '/api/v1/hostname'),
          curl('frontend', 'GET', '/hostname'),
        ],
        explanation:
          'The `rules.http` list makes Cilium redirect port 8080 of the api pods to its proxy, which checks method and path (both regular expressions) of every request.',
      },
      check: l7Check,
    },
    {
      id: 'hubble-drops',
      title: 'Find the drops in Hubble',
      instructions: labText(ID, 'steps/hubble-drops.md'),
      concepts: ['E4'],
      snippets: [
        {
          label: 'Start a pod that is not a frontend',
          command: `kubectl -n ${NS} apply -f cilium-l7-policy/other.yaml && kubectl -n ${NS} wait --for=condition=Ready pod/other --timeout=120s`,
        },
        { label: 'Try from there', command: curl('other', 'GET', '/api/v1/hostname') },
        { label: 'Dropped flows in this namespace', command: `${AGENT} hubble observe --namespace ${NS} --verdict DROPPED --last 20` },
        { label: 'HTTP requests the proxy saw', command: `${AGENT} hubble observe --namespace ${NS} --type l7 --last 20` },
      ],
      hints: [
        '`other` carries the label `app=other`, which the policy does not admit, so its packets are dropped before any HTTP happens: curl times out.',
        `Each agent shows only its own node's flows. The drop is recorded by the agent on the node of the api pod that was chosen: list the agents with \`kubectl -n kube-system get pods -l k8s-app=cilium -o wide\` and ask the right one (\`kubectl -n kube-system exec <pod> -c cilium-agent -- hubble observe …\`).`,
        "Look for `Policy denied DROPPED` for other, and for `http-request DROPPED` lines with a 403 for the frontend's refused requests.",
      ],
      solution: {
        commands: [
          `kubectl -n ${NS} apply -f cilium-l7-policy/other.yaml`,
          `kubectl -n ${NS} wait --for=condition=Ready pod/other --timeout=120s`,
          `${curl('other', 'GET', '/api/v1/hostname')} || true`,
          `for p in $(kubectl -n kube-system get pods -l k8s-app=cilium -o name); do kubectl -n kube-system exec "$p" -c cilium-agent -- hubble observe --namespace ${NS} --verdict DROPPED --last 20; done`,
        ],
        explanation:
          'Drops at L3/L4 happen in the eBPF datapath (`Policy denied`); L7 refusals happen in the proxy and appear as `http-request DROPPED`. Hubble shows both, with pod names and the reason.',
      },
      check: dropsCheck,
    },
  ],
});
