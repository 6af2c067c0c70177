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
import { CLUSTER_ANSWER, clusterPathCheck, LOCAL_ANSWER, localPathCheck } from './nodeport-path.ts';
import { AGNHOST } from '../_shared/workload.ts';
import { nodeLabel } from '../_shared/restore.ts';
import { recordSnippets, recordSteps } from '../../scripts/labs/checks/answer.ts';

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

/** A node of the lab's cluster as a shell word: `worker` runs the web pods, `worker2` none. */
const ON = (node: 'worker' | 'worker2') => `"$DPLAB_CLUSTER-${node}"`;
const NODE_PORT = `$(kubectl -n ${NS} get service web -o jsonpath='{.spec.ports[0].nodePort}')`;

/**
 * iptables: the hash kube-proxy gives web's chains (KUBE-EXT-, KUBE-SVC- and KUBE-SVL- share it,
 * on every node), cut from web's KUBE-NODEPORTS rule. Found from that rule, not from the chains'
 * comments: the last rule of KUBE-EXT (the jump to KUBE-SVL or KUBE-SVC) carries none. awk reads
 * to the end rather than `exit` at the first match: under a solution's `set -o pipefail`, an early
 * exit can end iptables-save with SIGPIPE mid-write, and the whole solution with it (exit 141,
 * seen on real kind).
 */
const HASH = `$(docker exec ${ON('worker')} iptables-save -t nat | awk '!seen && $2 == "KUBE-NODEPORTS" && /"${NS}\\/web"/ {sub("KUBE-EXT-", "", $NF); print $NF; seen = 1}')`;
/** web's NodePort rules, its external and local chains, and the filter table's drop, on one node. */
const IPT_PATH = (node: 'worker' | 'worker2') =>
  `docker exec ${ON(node)} iptables-save | grep -E "^-A .*(KUBE-(EXT|SVL)-${HASH}|${NS}/web has no local endpoints)"`;
/** How many endpoints web's KUBE-SVL chain jumps to on a node (none there: 0). */
const IPT_LOCAL_COUNT = (node: 'worker' | 'worker2') =>
  `$(docker exec ${ON(node)} iptables-save -t nat | grep -c "^-A KUBE-SVL-${HASH} .*-j KUBE-SEP-" || true)`;
const IPT_EXT = `docker exec ${ON('worker2')} iptables-save -t nat | grep "^-A KUBE-EXT-${HASH} "`;
const IPT_MASQ = `docker exec ${ON('worker2')} iptables-save -t nat | grep -E '^-A KUBE-(MARK-MASQ|POSTROUTING) '`;
const IPT_CLUSTER_COUNT = `$(docker exec ${ON('worker2')} iptables-save -t nat | grep -c "^-A KUBE-SVC-${HASH} .*-j KUBE-SEP-" || true)`;
const IPT_FIRST_JUMP = `$(docker exec ${ON('worker2')} iptables-save -t nat | awk -v c="KUBE-EXT-${HASH}" '!seen && $2 == c {print $NF; seen = 1}')`;

/** nftables: the whole of the named chains of web (`external`, `local`, `service`), as `nft list table` prints them. */
const NFT_CHAINS = (node: 'worker' | 'worker2', kinds: string) =>
  `docker exec ${ON(node)} nft list table ip kube-proxy | awk '/chain (${kinds})-[A-Z0-9]+-${NS}\\/web\\// {p=1} p {print} p && /^\\t}/ {p=0}'`;
const NFT_MAP = (node: 'worker' | 'worker2', map: string) => `docker exec ${ON(node)} nft list map ip kube-proxy ${map}`;
/** How many endpoint chains web's `local-` (or `service-`) chain picks from on a node. */
const NFT_COUNT = (node: 'worker' | 'worker2', kind: 'local' | 'service') =>
  `$(${NFT_CHAINS(node, kind)} | awk '{n += gsub(/goto endpoint-/, "")} END {print n + 0}')`;
const NFT_FIRST_RULE = `$(${NFT_CHAINS('worker2', 'external')} | awk 'NR == 2 {print $2}')`;

/** Cilium: the agent on one node (each agent keeps its own node's tables), and web's NodePort rows in its service list. */
const AGENT_ON = (node: 'worker' | 'worker2') =>
  `kubectl -n kube-system exec $(kubectl -n kube-system get pods -l k8s-app=cilium --field-selector spec.nodeName=${ON(node)} -o name) -c cilium-agent --`;
const CILIUM_ROWS = (node: 'worker' | 'worker2') =>
  `${AGENT_ON(node)} cilium-dbg service list | awk -v np=":${NODE_PORT}/" 'NR == 1 || /^[0-9]/ {on = NR == 1 || index($2, np)} on'`;
/** How many backends the external-scope NodePort row (`0.0.0.0:<port>/TCP`, not its `/i` twin) lists on a node. */
const CILIUM_COUNT = (node: 'worker' | 'worker2') =>
  `$(${AGENT_ON(node)} cilium-dbg service list | awk -v fe="0.0.0.0:${NODE_PORT}/TCP" '/^[0-9]/ {on = $2 == fe} on && /=>/ {n++} END {print n + 0}')`;

export default defineLab({
  id: ID,
  title: 'externalTrafficPolicy: Local versus Cluster',
  summary:
    "Expose web as a NodePort, knock on every node from outside, and see which nodes answer and which source address the pod sees, with externalTrafficPolicy Local and then Cluster; then follow the NodePort through a node's real rules (the external chain, the local chain or the drop, the masquerade mark) or Cilium's per-node service table.",
  modes: ['iptables', 'nftables', 'cilium'],
  minutes: 20,
  concepts: ['T2', 'T3', 'I3'],
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
      id: 'follow-nodeport',
      title: 'Follow the NodePort on a node with and a node without a web pod',
      instructions: labText(ID, 'steps/follow-nodeport.md'),
      concepts: ['T3'],
      snippets: [
        { label: "web's NodePort rules on the worker (has the pods)", command: IPT_PATH('worker'), modes: ['iptables'] },
        { label: 'The same on worker2 (no pod)', command: IPT_PATH('worker2'), modes: ['iptables'] },
        { label: 'The NodePort map (the same on every node)', command: NFT_MAP('worker', 'service-nodeports'), modes: ['nftables'] },
        { label: "web's external and local chains on the worker", command: NFT_CHAINS('worker', 'external|local'), modes: ['nftables'] },
        { label: 'The same on worker2', command: NFT_CHAINS('worker2', 'external|local'), modes: ['nftables'] },
        {
          label: "worker2's drop for NodePorts without a local endpoint",
          command: NFT_MAP('worker2', 'no-endpoint-nodeports'),
          modes: ['nftables'],
        },
        { label: "web's NodePort in the agent on the worker", command: CILIUM_ROWS('worker'), modes: ['cilium'] },
        { label: 'The same in the agent on worker2', command: CILIUM_ROWS('worker2'), modes: ['cilium'] },
        ...recordSnippets(
          NS,
          LOCAL_ANSWER,
          { 'with-pod': '<count on worker>', 'without-pod': '<count on worker2>' },
          'Write down how many endpoints each node reaches',
        ),
      ],
      hints: [
        'Every node has the same NodePort entry; what differs between the two nodes is the chain (or, with Cilium, the backend list) behind it.',
        'iptables: the last rule of `KUBE-EXT-…` jumps to `KUBE-SVL-…` only where there are local pods, and that jump has no comment, so search by the chain name, not for `lab-etp-local/web`. nftables: the `external-…` chain ends in `goto local-…` only on the worker. Cilium: count the `=>` lines under `0.0.0.0:<port>/TCP` (not its `/i` twin).',
        'Count the endpoints that outside traffic can reach on each node (a node that drops it reaches none), then record both: `with_pod=` the count on the worker, `without_pod=` the count on worker2, and write them down.',
      ],
      solution: {
        commands: [
          IPT_PATH('worker'),
          `${IPT_PATH('worker2')} || true`,
          ...recordSteps(NS, LOCAL_ANSWER, { 'with-pod': IPT_LOCAL_COUNT('worker'), 'without-pod': IPT_LOCAL_COUNT('worker2') }),
        ],
        byMode: {
          nftables: [
            NFT_CHAINS('worker', 'external|local'),
            NFT_CHAINS('worker2', 'external|local'),
            NFT_MAP('worker2', 'no-endpoint-nodeports'),
            ...recordSteps(NS, LOCAL_ANSWER, { 'with-pod': NFT_COUNT('worker', 'local'), 'without-pod': NFT_COUNT('worker2', 'local') }),
          ],
          cilium: [
            CILIUM_ROWS('worker'),
            CILIUM_ROWS('worker2'),
            ...recordSteps(NS, LOCAL_ANSWER, { 'with-pod': CILIUM_COUNT('worker'), 'without-pod': CILIUM_COUNT('worker2') }),
          ],
        },
        explanation:
          "On the worker the NodePort's path ends in the local chain with the two pods (Cilium: the NodePort frontend lists them); on worker2 there is no local chain, so outside traffic reaches no endpoint (0) and is dropped (Cilium: the frontend lists no backend and refuses).",
      },
      check: localPathCheck,
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
    {
      id: 'nodeport-masquerade',
      title: "Find the masquerade mark on the NodePort's path",
      instructions: labText(ID, 'steps/nodeport-masquerade.md'),
      concepts: ['T2', 'I3'],
      snippets: [
        { label: "web's external chain on worker2 now", command: IPT_EXT, modes: ['iptables'] },
        { label: 'The mark and where it is used', command: IPT_MASQ, modes: ['iptables'] },
        {
          label: "web's external and service chains on worker2 now",
          command: NFT_CHAINS('worker2', 'external|service'),
          modes: ['nftables'],
        },
        {
          label: 'The mark and where it is used',
          command: `docker exec ${ON('worker2')} nft list table ip kube-proxy | awk '/chain (mark-for-masquerade|masquerading) / {p=1} p {print} p && /^\\t}/ {p=0}'`,
          modes: ['nftables'],
        },
        { label: "web's NodePort in the agent on worker2 now", command: CILIUM_ROWS('worker2'), modes: ['cilium'] },
        ...recordSnippets(NS, CLUSTER_ANSWER, { 'without-pod': '<count on worker2>', mark: '<first chain>' }, 'Write down what you found', [
          'iptables',
          'nftables',
        ]),
        ...recordSnippets(NS, CLUSTER_ANSWER, { 'without-pod': '<count on worker2>' }, 'Write down what you found', ['cilium']),
      ],
      hints: [
        'Read worker2 again, the node without a web pod: with Cluster its NodePort leads somewhere now.',
        'iptables: the first rule of `KUBE-EXT-…` has the comment "masquerade traffic for … external destinations" and no match at all. nftables: the first rule of `external-…` is a bare `jump`. Cilium keeps no such rule; count the backends under `0.0.0.0:<port>/TCP`.',
        'Record the count as `without_pod` and, on iptables and nftables, the chain that first rule jumps to as `mark`, then write them down.',
      ],
      solution: {
        commands: [IPT_EXT, IPT_MASQ, ...recordSteps(NS, CLUSTER_ANSWER, { 'without-pod': IPT_CLUSTER_COUNT, mark: IPT_FIRST_JUMP })],
        byMode: {
          nftables: [
            NFT_CHAINS('worker2', 'external|service'),
            ...recordSteps(NS, CLUSTER_ANSWER, { 'without-pod': NFT_COUNT('worker2', 'service'), mark: NFT_FIRST_RULE }),
          ],
          cilium: [CILIUM_ROWS('worker2'), ...recordSteps(NS, CLUSTER_ANSWER, { 'without-pod': CILIUM_COUNT('worker2') })],
        },
        explanation:
          'With Cluster the external chain starts by marking every packet for masquerading (iptables `KUBE-MARK-MASQ`, nftables `mark-for-masquerade`) and then goes to the Cluster chain with both pods, on every node; the postrouting chain masquerades marked packets. Cilium lists both pods behind the NodePort on worker2 too and SNATs in eBPF when it forwards to another node.',
      },
      check: clusterPathCheck,
    },
  ],
});
