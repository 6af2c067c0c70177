/**
 * The sim provider: the real kube-apiserver, controller manager, scheduler, kube-proxy and
 * CoreDNS (built from their Go modules) on network-namespace nodes named like kind's, with a
 * kubelet stand-in per node. Linux + root. Node commands are `ip netns exec <node> …`; probes
 * "from outside" come from the host, which sits on the node bridge as the Docker host does on
 * kind's network.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CommandError, run } from '../base/exec.ts';
import { DplabError } from '../base/errors.ts';
import { projectRoot, stateDir } from '../base/paths.ts';
import { ensureSimBinaries, simBinDir } from '../sim/build.ts';
import {
  createNetwork,
  deleteSimCluster,
  readSimRecord,
  writeRecord,
  routePodCidrs,
  startDns,
  startKubelets,
  startKubeProxies,
  startSimControlPlane,
} from '../sim/cluster.ts';
import { isSimMode, simLayout, simStateDir, simUnsupported, type SimLayout } from '../sim/layout.ts';
import { inNode } from '../sim/network.ts';
import { ACTIONS, type Action, type ProvisionContext } from './actions.ts';
import { makeClusterHandle, sortNodes } from './handle.ts';
import { clusterName, isMode, kubeconfigPath, modeRecord, MODES, type Mode } from '../catalogue/modes.ts';
import { probeFromHost } from './probe.ts';
import type { ClusterProvider } from './provider.ts';

/** `docker exec <node> …` → `ip netns exec <node> …` for lab shells and solutions (other calls reach the real docker). */
const SHIM_DIR = join(projectRoot, 'scripts', 'sim', 'shims');

/**
 * The node-exec shim and kubectl (and the other built binaries), in front of PATH for what runs
 * against a sim cluster (the handle's `pathFirst`: checks, status, solutions, the lab terminals).
 */
function simPathFirst(): readonly string[] {
  return [SHIM_DIR, simBinDir()];
}

/** Has a sim cluster of this mode been made here (its record in the state folder)? Asked once per mode, by ClusterProviders. */
export function simClusterExists(mode: Mode): boolean {
  return existsSync(join(simStateDir(mode), 'cluster.json'));
}

async function requireTool(tool: string, args: string[], signal: AbortSignal): Promise<void> {
  try {
    await run(tool, args, { timeoutMs: 15_000, signal });
  } catch (err) {
    if (err instanceof CommandError && err.kind === 'tool-missing') throw err;
  }
}

function layoutOf(ctx: ProvisionContext): SimLayout {
  return simLayout(ctx.mode);
}

/** The rule tool kube-proxy programs the mode's node with: nft for its nftables mode, iptables otherwise (IPVS mode too). */
function ruleTool(mode: Mode): 'nft' | 'iptables' {
  const d = modeRecord(mode).dataplane;
  return d.kind === 'kube-proxy' && d.proxyMode === 'nftables' ? 'nft' : 'iptables';
}

const logs = (ctx: ProvisionContext) =>
  `See the logs under ${join(simLayout(ctx.mode).dir, 'logs')} (and control-plane/logs); \`dplab up ${ctx.mode} --provider sim --retain\` keeps them.`;

const nodesReady = ACTIONS.find((a) => a.id === 'nodes-ready')!;

const SIM_ACTIONS: readonly Action[] = [
  {
    id: 'preflight',
    title: 'Check Linux, root and the network tools',
    async run(ctx) {
      if (!isSimMode(ctx.mode)) throw simUnsupported(ctx.mode);
      if (process.platform !== 'linux')
        throw new DplabError('The sim provider needs Linux (network namespaces, iptables/nftables).', {
          fix: 'Use the kind provider (Docker) on this machine.',
          status: 409,
        });
      if (process.getuid?.() !== 0)
        throw new DplabError('The sim provider needs root: it creates network namespaces, a bridge and kube-proxy rules.', {
          fix: `Run it as root (\`sudo -E npm run dplab -- up ${ctx.mode} --provider sim\`).`,
          status: 409,
        });
      for (const [tool, args] of [
        ['ip', ['-V']],
        ['openssl', ['version']],
        ['curl', ['--version']],
        [ruleTool(ctx.mode), ['--version']],
      ] as const)
        await requireTool(tool, [...args], ctx.signal);
    },
  },
  {
    id: 'build',
    title: 'Build the real Kubernetes components (Go; cached after the first time)',
    async run(ctx) {
      await ensureSimBinaries({ signal: ctx.signal, onProgress: ctx.note });
    },
  },
  {
    id: 'create',
    title: 'Create the node network (3 namespaces on a bridge)',
    fix: (ctx) => `Check \`ip netns list\` and \`ip link show type bridge\`; \`dplab down ${ctx.mode} --provider sim\` removes leftovers.`,
    async run(ctx) {
      const layout = layoutOf(ctx);
      // Whatever a crashed earlier run left behind goes first.
      const stale = await deleteSimCluster(layout);
      if (stale.length) ctx.note(`Removed leftovers of an earlier run: ${stale.join(', ')}.`);
      await createNetwork(layout, simBinDir(), ctx.signal);
    },
  },
  {
    id: 'control-plane',
    title: 'Start etcd, kube-apiserver, kube-controller-manager and kube-scheduler',
    fix: logs,
    run: (ctx) => startSimControlPlane(layoutOf(ctx), simBinDir(), ctx.kubeconfig, ctx.signal, ctx.note),
  },
  {
    id: 'kubelets',
    title: 'Start the kubelet stand-ins and register the nodes',
    fix: logs,
    run: (ctx) => startKubelets(layoutOf(ctx), simBinDir(), ctx.signal),
  },
  {
    id: 'pod-routes',
    title: "Route every node's pod CIDR (kindnet-style)",
    fix: logs,
    async run(ctx) {
      const cidrs = await routePodCidrs(layoutOf(ctx), simBinDir(), ctx.signal);
      ctx.note(
        `Pod CIDRs: ${Object.entries(cidrs)
          .map(([n, c]) => `${n} ${c}`)
          .join(', ')}.`,
      );
    },
  },
  {
    id: 'dataplane',
    title: "Start kube-proxy on every node (kubeadm's DaemonSet)",
    fix: logs,
    run: (ctx) => startKubeProxies(layoutOf(ctx), simBinDir(), ctx.signal),
  },
  {
    id: 'coredns',
    title: 'Start CoreDNS behind the kube-dns Service',
    fix: logs,
    run: (ctx) => startDns(layoutOf(ctx), simBinDir(), ctx.signal),
  },
  {
    ...nodesReady,
    fix: logs,
    async run(ctx) {
      await nodesReady.run(ctx);
      writeRecord(layoutOf(ctx), { complete: true });
    },
  },
];

export const simProvider: ClusterProvider = {
  id: 'sim',
  actions: (mode) => {
    if (!isSimMode(mode)) return [SIM_ACTIONS[0]];
    return SIM_ACTIONS;
  },
  async list() {
    const dir = join(stateDir(), 'sim');
    if (!existsSync(dir)) return [];
    return readdirSync(dir).filter((n) => MODES.some((m) => clusterName(m) === n && isSimMode(m) && readSimRecord(simLayout(m))));
  },
  async exportKubeconfig(mode) {
    if (!existsSync(kubeconfigPath(mode))) {
      throw new DplabError(`The sim cluster ${clusterName(mode)} has no kubeconfig any more.`, {
        fix: `Recreate it: \`dplab down ${mode} --provider sim\` then \`dplab up ${mode} --provider sim\`.`,
        status: 409,
      });
    }
  },
  async delete(mode) {
    if (!isMode(mode) || !isSimMode(mode)) return;
    await deleteSimCluster(simLayout(mode));
  },
  handle(mode) {
    const known = () => {
      if (!isSimMode(mode)) throw simUnsupported(mode);
      const layout = simLayout(mode);
      if (!readSimRecord(layout))
        throw new DplabError(`The sim cluster ${clusterName(mode)} is not running.`, {
          fix: `Start it with \`dplab up ${mode} --provider sim\`.`,
          status: 409,
        });
      return layout;
    };
    const node = (name: string) => {
      const n = known().nodes.find((x) => x.name === name);
      if (!n) throw new DplabError(`${name} is not a node of ${clusterName(mode)}.`, { status: 404 });
      return n;
    };
    return makeClusterHandle(mode, 'sim', {
      pathFirst: simPathFirst(),
      nodes: async () => sortNodes(known().nodes.map((n) => n.name)),
      nodeExec: (name, args, opts) => inNode(node(name).name, args, opts),
      nodeShell: (name) => ['ip', 'netns', 'exec', node(name).name, 'bash'],
      nodeIp: async (name) => node(name).ip,
      probeFromOutside: async (name, port, path, opts) => probeFromHost(`http://${node(name).ip}:${port}${path}`, opts?.signal),
    });
  },
  manualCleanup: (mode) => `dplab down ${mode} --provider sim`,
  isComplete: (mode) => isSimMode(mode) && readSimRecord(simLayout(mode))?.complete === true,
};
