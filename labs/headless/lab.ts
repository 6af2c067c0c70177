/**
 * Headless Services: clusterIP None, so nothing is load balanced. DNS answers with the pod IPs
 * and no node holds rules or service entries for it, which a ClusterIP Service next to it shows.
 */
import { MODES } from '../../scripts/catalogue/modes.ts';
import { parse } from '../../scripts/dataplane/index.ts';
import { allOf, readyEndpoints, serviceRules, serviceSpec } from '../../scripts/labs/checks/index.ts';
import { defineLab } from '../../scripts/labs/schema.ts';
import { labText } from '../../scripts/labs/text.ts';
import { dnsCheck, HEADLESS_FQDN } from './checks.ts';
import { AGNHOST, WEB_DEPLOYMENT, WEB_SERVICE, CLIENT_POD, waitForWebRules, type RuleMode } from '../_shared/workload.ts';

const ID = 'headless';
const NS = 'lab-headless';
const FQDN = HEADLESS_FQDN(NS);
const CP = '"$DPLAB_CLUSTER-control-plane"';
/**
 * Add web's ClusterIP Service, wait until kube-proxy on the control-plane node has its rules (they
 * follow the Service a moment later: on the real kube-proxy of the sim provider the first read was
 * empty), then show the node's rules that name the lab's Services.
 */
const addAndShow = (mode: RuleMode, show: string) => [
  `kubectl -n ${NS} apply -f headless/web-service.yaml`,
  waitForWebRules(NS, mode, { node: CP }),
  `docker exec ${CP} sh -c '${show}'`,
];
const AGENT = 'kubectl -n kube-system exec ds/cilium -c cilium-agent --';

export default defineLab({
  id: ID,
  title: 'Headless Services',
  summary: 'Give web a Service without a virtual IP: DNS hands out the pod addresses themselves, and no node carries a single rule for it.',
  modes: [...MODES],
  minutes: 15,
  concepts: ['T7'],
  namespace: NS,
  setup: {
    manifests: [WEB_DEPLOYMENT],
    workspace: ['manifests/web-headless.yaml', WEB_SERVICE, CLIENT_POD],
    images: [AGNHOST],
  },
  steps: [
    {
      id: 'create-headless',
      title: 'Create a headless Service',
      instructions: labText(ID, 'steps/create-headless.md'),
      concepts: ['T7'],
      snippets: [
        { label: 'The web pods (already running)', command: `kubectl -n ${NS} get pods -l app=web -o wide` },
        { label: 'Read the Service', command: 'cat headless/web-headless.yaml' },
        { label: 'Apply it', command: `kubectl -n ${NS} apply -f headless/web-headless.yaml` },
        { label: 'No CLUSTER-IP', command: `kubectl -n ${NS} get service web-headless` },
        { label: 'Its EndpointSlice', command: `kubectl -n ${NS} get endpointslices -l kubernetes.io/service-name=web-headless -o wide` },
      ],
      hints: [
        'A Service becomes headless with one field: `clusterIP: None`. It can only be set when the Service is created.',
        `\`kubectl -n ${NS} apply -f headless/web-headless.yaml\` creates it; \`kubectl get service\` then shows \`None\` under CLUSTER-IP.`,
        'The EndpointSlice controller still lists the ready pods: DNS reads them from there.',
      ],
      solution: {
        commands: [`kubectl -n ${NS} apply -f headless/web-headless.yaml`, `kubectl -n ${NS} get service web-headless`],
        explanation: 'The Service has a selector, so the control plane still keeps EndpointSlices for it, but it never gets a virtual IP.',
      },
      check: allOf({
        service: serviceSpec('web-headless', { headless: true, selector: { app: 'web' } }),
        endpoints: readyEndpoints('web-headless', 3),
      }),
    },
    {
      id: 'dns-answers',
      title: 'Ask DNS for web-headless',
      instructions: labText(ID, 'steps/dns-answers.md'),
      concepts: ['T7'],
      snippets: [
        {
          label: 'Start the client pod',
          command: `kubectl -n ${NS} apply -f headless/client.yaml && kubectl -n ${NS} wait --for=condition=Ready pod/client --timeout=120s`,
        },
        { label: 'Look up the headless name', command: `kubectl -n ${NS} exec client -- nslookup ${FQDN}` },
        {
          label: 'Compare with the pod IPs',
          command: `kubectl -n ${NS} get pods -l app=web -o custom-columns=NAME:.metadata.name,IP:.status.podIP`,
        },
        {
          label: 'Ask twice: the order may change',
          command: `kubectl -n ${NS} exec client -- sh -c 'for i in 1 2; do nslookup ${FQDN} | grep ^Address | tail -n +2; echo; done'`,
        },
      ],
      hints: [
        'The agnhost image in the client pod ships `nslookup` and `dig`.',
        `The full name is \`web-headless.${NS}.svc.cluster.local\`; from inside the namespace \`web-headless\` alone also works.`,
        'Expect one `Address:` line per ready web pod; the first `Address` with `#53` is the DNS server itself.',
      ],
      solution: {
        commands: [
          `kubectl -n ${NS} apply -f headless/client.yaml`,
          `kubectl -n ${NS} wait --for=condition=Ready pod/client --timeout=120s`,
          `kubectl -n ${NS} exec client -- nslookup ${FQDN}`,
        ],
        explanation:
          'CoreDNS answers a headless name with one A record per ready endpoint. The client picks an address itself; nothing on the node balances it.',
      },
      check: dnsCheck,
    },
    {
      id: 'no-rules',
      title: "Compare the node's rules with a ClusterIP Service",
      instructions: labText(ID, 'steps/no-rules.md'),
      concepts: ['T7'],
      snippets: [
        {
          label: 'Add a normal ClusterIP Service',
          command: `kubectl -n ${NS} apply -f headless/web-service.yaml && kubectl -n ${NS} get services`,
        },
        {
          label: 'iptables: rules per Service',
          command: `docker exec ${CP} sh -c 'iptables-save | grep "${NS}/web"'`,
          modes: ['iptables'],
        },
        {
          label: 'nftables: elements per Service',
          command: `docker exec ${CP} sh -c 'nft list table ip kube-proxy | grep "${NS}/web"'`,
          modes: ['nftables'],
        },
        { label: 'IPVS: virtual servers', command: `docker exec ${CP} cat /proc/net/ip_vs`, modes: ['ipvs'] },
        {
          label: "IPVS: web's ClusterIP",
          command: `kubectl -n ${NS} get service web -o jsonpath='{.spec.clusterIP}{"\\n"}'`,
          modes: ['ipvs'],
        },
        { label: 'Cilium: the service table', command: `${AGENT} cilium-dbg service list`, modes: ['cilium'] },
      ],
      hints: [
        'Create the ClusterIP Service `web` from `headless/web-service.yaml`; it selects the same pods.',
        "kube-proxy names the Service in its rules (`lab-headless/web` in comments and chain names); search the node's rules for both names.",
        'Only `lab-headless/web` shows up. `web-headless` has no virtual IP, so there is nothing to translate.',
      ],
      solution: {
        commands: addAndShow('iptables', `iptables-save | grep "${NS}/web"`),
        byMode: {
          nftables: addAndShow('nftables', `nft list table ip kube-proxy | grep "${NS}/web"`),
          ipvs: [`kubectl -n ${NS} apply -f headless/web-service.yaml`, `docker exec ${CP} cat /proc/net/ip_vs`],
          cilium: [`kubectl -n ${NS} apply -f headless/web-service.yaml`, `${AGENT} cilium-dbg service list`],
        },
        explanation: 'The ClusterIP Service gets a frontend with three backends on every node; the headless one gets nothing at all.',
      },
      check: allOf({
        service: serviceSpec('web', { type: 'ClusterIP', selector: { app: 'web' } }),
        clusterIp: serviceRules('web', { backends: 3 }, parse),
        headless: serviceRules('web-headless', { backends: 0 }, parse),
      }),
    },
  ],
});
