/**
 * Core exercise 4: web as a NodePort with externalTrafficPolicy Local, probed on every node from
 * outside; only the node with web pods answers and the pods see the client's real address. Then
 * Cluster: every node answers, and the pods see a node's address instead (SNAT).
 */
import { allOf, deploymentReady, serviceSpec } from '../../scripts/labs/checks/index.ts';
import { probeClientIp } from '../../scripts/labs/checks/client-ip.ts';
import { defineLab } from '../../scripts/labs/schema.ts';
import { labText } from '../../scripts/labs/text.ts';
import { pinnedToOneNode } from './checks.ts';
import { AGNHOST } from '../_shared/workload.ts';
import { nodeLabel } from '../_shared/restore.ts';

const ID = 'etp-local';
const NS = 'lab-etp-local';
const LABEL = 'kubectl label node "$DPLAB_CLUSTER-worker" dplab-web=yes --overwrite';
const PORT = `PORT=$(kubectl -n ${NS} get service web -o jsonpath='{.spec.ports[0].nodePort}')`;
/** Every node's address on the `kind` network, as `<node> <ip>` lines. */
const NODE_IPS = `for n in $(kind get nodes --name "$DPLAB_CLUSTER"); do echo "$n $(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$n")"; done`;
/**
 * kube-proxy's (and Cilium's) health server for web-lb on every node: the HTTP status is 200
 * where the node has local endpoints, 503 where it has none. Only a LoadBalancer with Local
 * policy has a healthCheckNodePort; a NodePort gets none, so this reads web-lb's.
 */
export const HEALTH_PROBE = `HC=$(kubectl -n ${NS} get service web-lb -o jsonpath='{.spec.healthCheckNodePort}'); ${NODE_IPS} | while read -r n ip; do printf '%-28s %s\\n' "$n" "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://$ip:$HC/")"; done`;
/** Ask every node from this terminal (outside the nodes); a node that drops the traffic gives no answer within 2 s. */
const probeAll = (path: string) =>
  `${PORT}; for n in $(kind get nodes --name "$DPLAB_CLUSTER"); do ip=$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$n"); printf '%-28s %s\\n' "$n" "$(curl -s --max-time 2 "http://$ip:$PORT${path}" || echo 'no answer')"; done`;

export default defineLab({
  id: ID,
  title: 'externalTrafficPolicy: Local versus Cluster',
  summary:
    'Expose web as a NodePort, knock on every node from outside, and see which nodes answer and which source address the pod sees, with externalTrafficPolicy Local and then Cluster.',
  modes: ['iptables', 'nftables', 'cilium'],
  minutes: 20,
  concepts: ['T2', 'T3'],
  namespace: NS,
  setup: {
    manifests: [],
    workspace: ['manifests/web-deployment.yaml', 'manifests/web-nodeport.yaml', 'manifests/web-lb.yaml'],
    images: [AGNHOST],
    // The first step labels a worker; reset takes the label off again.
    restore: [nodeLabel('dplab-web')],
  },
  steps: [
    {
      id: 'pin-web',
      title: 'Run web on one node only',
      instructions: labText(ID, 'steps/pin-web.md'),
      concepts: ['T3'],
      snippets: [
        { label: 'See the nodes', command: 'kubectl get nodes -o wide' },
        { label: 'Label one worker', command: LABEL },
        { label: 'Read the Deployment', command: 'cat etp-local/web-deployment.yaml' },
        { label: 'Apply it', command: `kubectl -n ${NS} apply -f etp-local/web-deployment.yaml` },
        { label: 'Where did the pods land?', command: `kubectl -n ${NS} get pods -l app=web -o wide` },
      ],
      hints: [
        'The Deployment only runs on nodes with the label `dplab-web=yes`; until a node has it, the pods stay Pending.',
        `\`${LABEL}\` labels the first worker; then apply \`etp-local/web-deployment.yaml\`.`,
        `Pending pods? \`kubectl -n ${NS} describe pod -l app=web\` shows the scheduler's reason under Events.`,
      ],
      solution: {
        commands: [
          LABEL,
          `kubectl -n ${NS} apply -f etp-local/web-deployment.yaml`,
          `kubectl -n ${NS} rollout status deployment/web --timeout=180s`,
        ],
        explanation:
          'The label gives the nodeSelector a match on exactly one node, so both replicas land there and the other two nodes run no web pod.',
      },
      check: allOf({ deployment: deploymentReady('web', { replicas: 2, image: AGNHOST, runs: 'netexec' }), placement: pinnedToOneNode }),
    },
    {
      id: 'local-policy',
      title: 'Expose web with externalTrafficPolicy: Local',
      instructions: labText(ID, 'steps/local-policy.md'),
      concepts: ['T3'],
      snippets: [
        { label: 'Read the Service', command: 'cat etp-local/web-nodeport.yaml' },
        { label: 'Apply it', command: `kubectl -n ${NS} apply -f etp-local/web-nodeport.yaml` },
        { label: 'Its NodePort', command: `kubectl -n ${NS} get service web -o wide` },
        { label: 'Ask every node for /hostname', command: probeAll('/hostname') },
        { label: 'Ask every node for /clientip', command: probeAll('/clientip') },
        {
          label: 'A LoadBalancer twin of web (health checks exist only for LoadBalancer + Local)',
          command: `kubectl -n ${NS} apply -f etp-local/web-lb.yaml`,
        },
        { label: "Ask every node's health-check port: 200 or 503", command: HEALTH_PROBE },
      ],
      hints: [
        'The manifest in your workspace is a NodePort Service with `externalTrafficPolicy: Local`; apply it.',
        'The probe loop runs in your terminal, outside every node. A node that sends traffic to itself would skip the policy, so never test from inside a node.',
        'Two nodes staying silent is the point: they have no local web pod, so they drop the traffic instead of forwarding it.',
      ],
      solution: {
        commands: [`kubectl -n ${NS} apply -f etp-local/web-nodeport.yaml`, probeAll('/hostname'), probeAll('/clientip')],
        explanation:
          'With `Local`, each node only uses its own ready endpoints for outside traffic. Nodes without one drop it; the node with the pods delivers it without SNAT, so `/clientip` shows your address.',
      },
      check: allOf({
        service: serviceSpec('web', { type: 'NodePort', externalTrafficPolicy: 'Local', selector: { app: 'web' } }),
        traffic: probeClientIp({ service: 'web', answer: { nodesWithPods: { app: 'web' } }, source: 'client' }),
      }),
    },
    {
      id: 'cluster-policy',
      title: 'Switch to externalTrafficPolicy: Cluster',
      instructions: labText(ID, 'steps/cluster-policy.md'),
      concepts: ['T2'],
      snippets: [
        { label: 'Switch the policy', command: `kubectl -n ${NS} patch service web -p '{"spec":{"externalTrafficPolicy":"Cluster"}}'` },
        { label: 'Ask every node for /clientip', command: probeAll('/clientip') },
        { label: 'Ask every node for /hostname', command: probeAll('/hostname') },
      ],
      hints: [
        '`kubectl patch service web` can change one field of the spec in place.',
        'Watch the `/clientip` answers: the node you asked now rewrites the source before it forwards.',
        'Requests to a node without a pod take an extra hop to the node that has them; the answer comes back the same way.',
      ],
      solution: {
        commands: [`kubectl -n ${NS} patch service web -p '{"spec":{"externalTrafficPolicy":"Cluster"}}'`, probeAll('/clientip')],
        explanation:
          "`Cluster` lets every node use every endpoint. To get the reply back through itself, a node masquerades the connection, so the pod sees the node's address instead of yours.",
      },
      check: allOf({
        service: serviceSpec('web', { type: 'NodePort', externalTrafficPolicy: 'Cluster', selector: { app: 'web' } }),
        traffic: probeClientIp({ service: 'web', answer: 'all', source: 'snat' }),
      }),
    },
  ],
});
