/**
 * Core exercise 1: which proxy mode runs here, where are `web`'s rules on a node, and where do
 * they lead. Runs on the iptables and nftables clusters; the commands differ, the idea does not.
 */
import { defineLab } from '../../scripts/labs/schema.ts';
import { labText } from '../../scripts/labs/text.ts';
import { recordSnippets, recordSteps } from '../../scripts/labs/checks/answer.ts';
import { findChainCheck, followEndpointsCheck, readModeCheck } from './checks.ts';
import { WEB_AND_CLIENT, waitForWebRules } from '../_shared/workload.ts';
import { iptablesServiceRules } from '../_shared/iptables-service.ts';

const ID = 'proxy-mode-rules';
const NS = 'lab-proxy-mode-rules';
const NODE = '"$DPLAB_CLUSTER-worker"';
const PROXY_MODE = `docker exec ${NODE} curl -s http://127.0.0.1:10249/proxyMode`;
const NAT = `docker exec ${NODE} iptables-save -t nat`;
const NFT = `docker exec ${NODE} nft list table ip kube-proxy`;
const SVC_CHAIN_IPT = `$(${NAT} | awk '/^-A KUBE-SERVICES .*"${NS}\\/web cluster IP"/ {print $NF}')`;
/** web's KUBE-SEP chains, found from its KUBE-SVC chain (their own comments go in large cluster mode). */
const WEB_ENDPOINT_CHAINS = iptablesServiceRules(NS, 'web', 'endpoint-chains');
const SVC_CHAIN_NFT = `$(docker exec ${NODE} nft list map ip kube-proxy service-ips | grep -o 'service-[A-Z0-9]*-${NS}/web/tcp/')`;

export default defineLab({
  id: ID,
  title: 'Proxy mode and the rules behind web',
  summary:
    'Ask a node which proxy mode kube-proxy runs in, find the rules it wrote for the web Service, and follow them from the ClusterIP to the three pods.',
  modes: ['iptables', 'nftables'],
  minutes: 20,
  concepts: ['S3', 'I1', 'I6', 'N1', 'N3'],
  namespace: NS,
  setup: WEB_AND_CLIENT,
  steps: [
    {
      id: 'read-mode',
      title: 'Ask a node for its proxy mode',
      instructions: labText(ID, 'steps/read-mode.md'),
      concepts: ['S3'],
      snippets: [
        { label: 'One kube-proxy pod per node', command: 'kubectl -n kube-system get pods -l k8s-app=kube-proxy -o wide' },
        { label: "Ask the worker's kube-proxy", command: PROXY_MODE },
        ...recordSnippets(NS, 'proxy-mode', { mode: '<mode>' }, 'Write it down'),
      ],
      hints: [
        'kube-proxy runs with hostNetwork, so its metrics port 10249 listens on 127.0.0.1 inside the node container itself.',
        `\`${PROXY_MODE}\` prints one word.`,
        'Store that word: type `mode=` and the word, then run the command that writes it down.',
      ],
      solution: {
        commands: [PROXY_MODE, ...recordSteps(NS, 'proxy-mode', { mode: `$(${PROXY_MODE})` })],
        explanation:
          'The node answers for itself; `mode` keeps its answer, and the ConfigMap is where the check reads it (created with `--dry-run=client -o yaml | kubectl apply` so it can be run twice).',
      },
      check: readModeCheck,
    },
    {
      id: 'find-web-chain',
      title: "Find web's entry in the node's rules",
      instructions: labText(ID, 'steps/find-web-chain.md'),
      concepts: ['I6', 'N1', 'N3'],
      snippets: [
        { label: "web's ClusterIP", command: `kubectl -n ${NS} get service web` },
        { label: 'Every rule that names web', command: `${NAT} | grep '${NS}/web'`, modes: ['iptables'] },
        { label: 'How many KUBE rules in total?', command: `${NAT} | grep -c '^-A KUBE'`, modes: ['iptables'] },
        {
          label: 'The service-ips verdict map',
          command: `docker exec ${NODE} nft list map ip kube-proxy service-ips`,
          modes: ['nftables'],
        },
        { label: 'The whole table', command: `${NFT} | less`, modes: ['nftables'] },
        ...recordSnippets(NS, 'web-chain', { chain: '<chain name>' }, 'Write down the chain'),
      ],
      hints: [
        'kube-proxy labels everything it writes for a Service with `<namespace>/<name>`; search for that.',
        `iptables: the rule in \`KUBE-SERVICES\` with the comment \`"${NS}/web cluster IP"\` ends in \`-j KUBE-SVC-…\`. nftables: the element of \`service-ips\` for web's ClusterIP ends in \`goto service-…-${NS}/web/tcp/\`.`,
        'Record just the chain name, e.g. `chain=KUBE-SVC-ABCDEFGHIJKLMNOP`, then write it down.',
      ],
      solution: {
        // The rules follow the pods with a delay: wait for them first (see waitForWebRules).
        commands: [
          waitForWebRules(NS, 'iptables'),
          `${NAT} | grep '${NS}/web cluster IP'`,
          ...recordSteps(NS, 'web-chain', { chain: SVC_CHAIN_IPT }),
        ],
        byMode: {
          nftables: [
            waitForWebRules(NS, 'nftables'),
            `docker exec ${NODE} nft list map ip kube-proxy service-ips | grep '${NS}/web'`,
            ...recordSteps(NS, 'web-chain', { chain: SVC_CHAIN_NFT }),
          ],
        },
        explanation:
          'After the wait, the first command shows the entry for web; the next cuts the chain name out of it into `chain`, and the last records it.',
      },
      check: findChainCheck,
    },
    {
      id: 'follow-to-endpoints',
      title: 'Follow the chain to the pods',
      instructions: labText(ID, 'steps/follow-to-endpoints.md'),
      concepts: ['I1', 'N1'],
      snippets: [
        { label: "Keep web's Service chain in `chain`", command: `chain=${SVC_CHAIN_IPT}`, modes: ['iptables'] },
        { label: 'The Service chain', command: `${NAT} | grep "^-A $chain "`, modes: ['iptables'] },
        { label: 'The endpoint chains and their DNAT', command: `${NAT} | ${WEB_ENDPOINT_CHAINS}`, modes: ['iptables'] },
        { label: "Keep web's Service chain in `chain`", command: `chain=${SVC_CHAIN_NFT}`, modes: ['nftables'] },
        { label: 'The Service chain', command: `docker exec ${NODE} nft list chain ip kube-proxy "$chain"`, modes: ['nftables'] },
        { label: 'The endpoint chains and their DNAT', command: `${NFT} | grep -A3 'chain endpoint-.*${NS}/web/'`, modes: ['nftables'] },
        {
          label: 'Compare with the EndpointSlices',
          command: `kubectl -n ${NS} get endpointslices -l kubernetes.io/service-name=web -o wide`,
        },
        ...recordSnippets(NS, 'web-endpoints', { endpoints: '<ip:port ip:port ip:port>' }, 'Write down the targets'),
      ],
      hints: [
        'The chain you recorded has one entry per endpoint; each leads to a per-endpoint chain whose last rule rewrites the destination.',
        'iptables: `-j DNAT --to-destination <ip>:<port>` in the KUBE-SEP chains. nftables: `dnat to <ip>:<port>` in the endpoint-… chains.',
        'Record the three `ip:port` pairs separated by spaces: `endpoints="10.x.y.z:8080 …"`, then write them down.',
      ],
      solution: {
        commands: [
          `${NAT} | ${WEB_ENDPOINT_CHAINS} | grep -o 'to-destination [0-9.:]*'`,
          ...recordSteps(NS, 'web-endpoints', {
            endpoints: `$(${NAT} | ${WEB_ENDPOINT_CHAINS} | grep -o 'to-destination [0-9.:]*' | cut -d' ' -f2 | sort | xargs)`,
          }),
        ],
        byMode: {
          nftables: [
            `${NFT} | grep -A3 'chain endpoint-.*${NS}/web/'`,
            ...recordSteps(NS, 'web-endpoints', {
              endpoints: `$(${NFT} | awk '/chain endpoint-.*${NS}\\/web\\// {inside=1} inside && /dnat to/ {print $NF; inside=0}' | sort | xargs)`,
            }),
          ],
        },
        explanation:
          'Each per-endpoint chain ends in one DNAT; collecting their targets gives exactly the addresses the EndpointSlices list.',
      },
      check: followEndpointsCheck,
    },
  ],
});
