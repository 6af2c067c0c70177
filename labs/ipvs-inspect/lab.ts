/**
 * Core exercise 2: the web Service as an IPVS virtual server. Install ipvsadm in a node, read
 * the virtual server and its real servers, see the ClusterIP bound to kube-ipvs0, then switch
 * kube-proxy's scheduler to least-connection and watch the virtual server change.
 */
import { recordSnippets, recordSteps } from '../../scripts/labs/checks/answer.ts';
import { defineLab } from '../../scripts/labs/schema.ts';
import { labText } from '../../scripts/labs/text.ts';
import { installIpvsadmCheck, switchToLcCheck, virtualServerCheck } from './checks.ts';
import { WEB_AND_CLIENT, clientNode } from '../_shared/workload.ts';
import { ipvsSchedulerDefault, nodePackage } from '../_shared/restore.ts';

const ID = 'ipvs-inspect';
const NS = 'lab-ipvs-inspect';
const NODE = '"$DPLAB_CLUSTER-worker"';
/** IPVS keeps a connection entry on the node the client's packets entered: the client's node. */
const CLIENT_NODE = clientNode(NS);
const INSTALL = `docker exec ${NODE} sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ipvsadm'`;
const LIST = `docker exec ${NODE} ipvsadm -Ln`;
const CLUSTER_IP = `$(kubectl -n ${NS} get service web -o jsonpath='{.spec.clusterIP}')`;
const SET_LC = `kubectl -n kube-system get configmap kube-proxy -o yaml | sed -E 's/^( +scheduler:).*/\\1 lc/' | kubectl apply -f -`;
const RESTART = 'kubectl -n kube-system rollout restart daemonset kube-proxy';
const WAIT = 'kubectl -n kube-system rollout status daemonset kube-proxy --timeout=120s';

export default defineLab({
  id: ID,
  title: 'IPVS: web as a virtual server',
  summary:
    'Install ipvsadm in a kind node, read web as an IPVS virtual server with three real servers, find its ClusterIP on kube-ipvs0, and switch the scheduler from round robin to least connection.',
  modes: ['ipvs'],
  minutes: 25,
  concepts: ['V1', 'V2', 'V3'],
  namespace: NS,
  // Steps install ipvsadm in a node and switch kube-proxy to lc: reset puts both back.
  setup: { ...WEB_AND_CLIENT, restore: [nodePackage('ipvsadm'), ipvsSchedulerDefault()] },
  steps: [
    {
      id: 'install-ipvsadm',
      title: 'Install ipvsadm in a node and list the virtual servers',
      instructions: labText(ID, 'steps/install-ipvsadm.md'),
      concepts: ['V3', 'V1'],
      snippets: [
        { label: 'The kernel side is already there', command: `docker exec ${NODE} cat /proc/net/ip_vs` },
        { label: 'Is ipvsadm there?', command: LIST },
        { label: 'Install it (Debian inside the node)', command: INSTALL },
        { label: 'List the virtual servers', command: LIST },
        { label: 'With traffic counters', command: `docker exec ${NODE} ipvsadm -Ln --stats` },
      ],
      hints: [
        'A kind node is a Debian container, so `apt-get` works inside it: `docker exec` runs it there.',
        `Install with \`${INSTALL}\`.`,
        `\`${LIST}\` then prints one block per virtual server; web's starts with \`TCP  <ClusterIP>:80 rr\`.`,
      ],
      solution: {
        commands: [INSTALL, LIST],
        explanation: 'ipvsadm only reads the tables the kernel already holds; installing it changes nothing about forwarding.',
      },
      check: installIpvsadmCheck,
    },
    {
      id: 'find-virtual-server',
      title: "Read web's virtual server and find its address on kube-ipvs0",
      instructions: labText(ID, 'steps/find-virtual-server.md'),
      concepts: ['V1'],
      snippets: [
        { label: "web's ClusterIP", command: `kubectl -n ${NS} get service web` },
        { label: 'Just web', command: `docker exec ${NODE} ipvsadm -Ln -t ${CLUSTER_IP}:80` },
        { label: 'The dummy interface', command: `docker exec ${NODE} ip -4 addr show dev kube-ipvs0` },
        { label: 'IPVS still needs a little iptables', command: `docker exec ${NODE} iptables-save -t nat | grep -c KUBE` },
        {
          label:
            "Connections IPVS tracks, on the client's node (the kernel's table, in hex; ipvsadm -Lnc prints it readably where ipvsadm is installed)",
          command: `kubectl -n ${NS} exec client -- curl -s http://web/hostname; docker exec ${CLIENT_NODE} cat /proc/net/ip_vs_conn`,
        },
        ...recordSnippets(NS, 'web-ipvs', { 'virtual-server': '<ClusterIP>:80', scheduler: '<scheduler>' }, 'Write it down'),
      ],
      hints: [
        '`ipvsadm -Ln -t <ip>:<port>` shows one virtual server; its first line ends with the scheduler.',
        'kube-ipvs0 is a dummy interface: it never sends anything, it only makes the node treat every ClusterIP as a local address.',
        'Record both, e.g. `virtual_server="10.96.0.10:80"` and `scheduler="rr"`, then write them down.',
      ],
      solution: {
        commands: [
          `docker exec ${NODE} ipvsadm -Ln -t ${CLUSTER_IP}:80`,
          `docker exec ${NODE} ip -4 addr show dev kube-ipvs0`,
          ...recordSteps(NS, 'web-ipvs', {
            'virtual-server': `${CLUSTER_IP}:80`,
            scheduler: `$(docker exec ${NODE} ipvsadm -Ln -t ${CLUSTER_IP}:80 | awk '$1 == "TCP" {print $3}')`,
          }),
        ],
        explanation: 'The virtual server line reads `TCP  <ip>:80 <scheduler>`; its third field is the scheduler.',
      },
      check: virtualServerCheck,
    },
    {
      id: 'switch-to-lc',
      title: 'Switch the scheduler to least connection',
      instructions: labText(ID, 'steps/switch-to-lc.md'),
      concepts: ['V2'],
      snippets: [
        {
          label: "kube-proxy's configuration",
          command: 'kubectl -n kube-system get configmap kube-proxy -o jsonpath="{.data.config\\.conf}" | grep -A6 "^ipvs:"',
        },
        { label: 'Edit it by hand', command: 'kubectl -n kube-system edit configmap kube-proxy' },
        { label: 'Or set it with sed', command: SET_LC },
        { label: 'Restart kube-proxy on every node', command: `${RESTART} && ${WAIT}` },
        { label: 'Look again', command: `docker exec ${NODE} ipvsadm -Ln -t ${CLUSTER_IP}:80` },
      ],
      hints: [
        'kube-proxy reads its KubeProxyConfiguration from the `kube-proxy` ConfigMap in kube-system (key `config.conf`); the IPVS scheduler is `ipvs.scheduler`, empty meaning rr.',
        'Changing the ConfigMap alone does nothing: kube-proxy reads it at start. `kubectl -n kube-system rollout restart daemonset kube-proxy`.',
        `Still rr after the restart? The host kernel needs the \`ip_vs_lc\` module: \`sudo modprobe ip_vs_lc\` on a Linux host, or from a node, which loads the host's module: \`docker exec ${NODE} modprobe ip_vs_lc\`. Look at \`kubectl -n kube-system logs ds/kube-proxy\`.`,
      ],
      solution: {
        commands: [SET_LC, RESTART, WAIT, `docker exec ${NODE} ipvsadm -Ln -t ${CLUSTER_IP}:80`],
        explanation:
          'The new kube-proxy pods compare each virtual server with the one they want (scheduler included) and update those that differ. To go back: set the scheduler to `""` (or `rr`) and restart again.',
      },
      check: switchToLcCheck,
    },
  ],
});
