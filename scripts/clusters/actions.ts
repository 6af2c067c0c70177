/**
 * Provisioning as an ordered list of actions (as kind does it): each has an id, a title the
 * UI shows, and `run(ctx)`. The manager runs them in order, emits start/end/fail, and cleans up.
 */
import { allOrCancel, CommandError, howItEnded, run } from '../base/exec.ts';
import { DplabError } from '../base/errors.ts';
import { preflightError, runPreflight, type CiliumInstaller, type PreflightSystem } from '../preflight/index.ts';
import { ensureKubeconfigDir, nodeHealth } from './kube.ts';
import type { ClusterHandle } from './handle.ts';
import { kindConfigFor, kindNodeCount, kindOverlay, kindWorkerNames, nodeImage } from './kind-overlay.ts';
import { labNodeImage } from './lab-node-image.ts';
import { agentExec, CILIUM, MODES, modeRecord, runsAgent, unreachable, type Agent, type Mode } from '../catalogue/modes.ts';
import { kubectlTimeoutFlag, type ProvisionTimeouts } from './timeouts.ts';
import { CILIUM_HELM_REPO, CILIUM_VERSION, KUBERNETES_VERSION } from '../base/versions.ts';
import { waitUntil } from './wait.ts';
import { watchForCrashes } from './crash-watch.ts';

export interface ProvisionContext {
  mode: Mode;
  name: string;
  kubeconfig: string;
  /** The handle of the cluster being made: kubectl with its kubeconfig and its provider's programs (the sim's kubectl). */
  cluster: Pick<ClusterHandle, 'kubectl'>;
  signal: AbortSignal;
  timeouts: ProvisionTimeouts;
  /** Keep a half-made cluster for debugging (also passed to `kind create --retain`). */
  retain: boolean;
  /** The labs' images, put into the workers' node image when present locally. */
  images: readonly string[];
  /** The node image the workers start from, with the lab images inside (set by the images action); absent: kind's own. */
  workerImage?: string;
  system?: PreflightSystem;
  /** Chosen by the preflight: the cilium CLI when present, else helm. */
  ciliumInstaller?: CiliumInstaller;
  /** An informational line for the progress view ("skipped image x: not present locally"). */
  note(message: string): void;
}

export interface Action {
  id: string;
  title: string;
  /** Only for some modes. */
  modes?: readonly Mode[];
  /** The fix to show when this action fails and the failure itself has none. */
  fix?: (ctx: ProvisionContext) => string;
  run(ctx: ProvisionContext): Promise<void>;
}

/** Cilium's values for kube-proxy replacement on the kind cluster `name`. ipam=kubernetes makes
 * Cilium use the podSubnet of our kind config, so each cluster keeps its distinct pod range. */
function ciliumValues(name: string): string[] {
  return ['kubeProxyReplacement=true', `k8sServiceHost=${name}-control-plane`, 'k8sServicePort=6443', 'ipam.mode=kubernetes'];
}

const setFlags = (values: string[]) => values.flatMap((v) => ['--set', v]);

/**
 * The command that installs Cilium on the kind cluster `name` (reached through `kubeconfig`) with
 * the installer the preflight chose: helm, or else the cilium CLI. The test environment's overlay
 * installs from a chart folder with extra values. The kind bench runs the same command by hand.
 */
export function ciliumInstallCommand(
  name: string,
  kubeconfig: string,
  installer: CiliumInstaller | undefined,
): { file: string; args: string[]; env?: NodeJS.ProcessEnv } {
  const local = kindOverlay()?.cilium;
  const values = setFlags([...ciliumValues(name), ...(local?.values ?? [])]);
  if (installer === 'helm') {
    const chart = local ? [local.chart] : ['cilium', '--repo', CILIUM_HELM_REPO, '--version', CILIUM_VERSION];
    return {
      file: 'helm',
      args: ['upgrade', '--install', 'cilium', ...chart, '--namespace', 'kube-system', '--kubeconfig', kubeconfig, ...values],
    };
  }
  // The cilium CLI has no --kubeconfig flag; KUBECONFIG keeps it off ~/.kube/config.
  const chart = local ? ['--chart-directory', local.chart] : [];
  return { file: 'cilium', args: ['install', '--version', CILIUM_VERSION, ...chart, ...values], env: { KUBECONFIG: kubeconfig } };
}

const rolloutArgs = (ctx: ProvisionContext, kind: 'daemonset' | 'deployment', name: string) => ({
  args: ['-n', 'kube-system', 'rollout', 'status', `${kind}/${name}`, kubectlTimeoutFlag(ctx.timeouts.rollout)],
  opts: { timeoutMs: ctx.timeouts.rollout + ctx.timeouts.grace, signal: ctx.signal },
});

const logsFix = (ctx: ProvisionContext, what: string) =>
  `Look at \`kubectl --kubeconfig ${ctx.kubeconfig} -n kube-system get pods\` and the logs of ${what}; start again with \`dplab up ${ctx.mode} --retain\` to keep the cluster for debugging.`;

/** The last line a failed command wrote that is not blank ("" when none): where tools say why. */
const lastLine = (text: string): string =>
  text
    .trim()
    .split('\n')
    .filter((l) => l.trim())
    .at(-1)
    ?.trim() ?? '';

/** `KubeProxyReplacement:    True   [eth0 …]` in `cilium-dbg status`. */
export const KPR_TRUE = /^KubeProxyReplacement:\s+True\b/m;

interface NodeProbe {
  node: string;
  args: string[];
  /** What a failing probe means ("containerd does not answer yet"). */
  not: string;
}

/** kind has started kubeadm on the control plane: its CA exists. */
const kubeadmStarted = (ctx: ProvisionContext): NodeProbe => ({
  node: `${ctx.name}-control-plane`,
  args: ['test', '-f', '/etc/kubernetes/pki/ca.crt'],
  not: 'kubeadm has not started yet',
});

/** Wait, beside `kind create`, until every probe succeeds in its node (`docker exec`), asking again each second. */
async function nodesAnswer(ctx: ProvisionContext, probes: readonly NodeProbe[], what: string): Promise<void> {
  await waitUntil(
    async () => {
      for (const p of probes) {
        try {
          await run('docker', ['exec', p.node, ...p.args], { timeoutMs: ctx.timeouts.quick, signal: ctx.signal });
        } catch (err) {
          if (!(err instanceof CommandError) || err.kind === 'aborted') throw err;
          return { done: false, seen: `${p.node}: ${p.not} (${lastLine(err.stderr) || howItEnded(err)})` };
        }
      }
      return { done: true, value: undefined };
    },
    {
      timeoutMs: ctx.timeouts.create,
      intervalMs: Math.min(ctx.timeouts.pollInterval, 1_000),
      signal: ctx.signal,
      what,
      fix: `Check \`docker ps -a --filter name=${ctx.name}\`; \`dplab doctor --mode ${ctx.mode}\` checks the host.`,
    },
  );
}

/**
 * CoreDNS's readiness probe as kubeadm writes it has no period, so the kubelet asks every 10 s; a
 * CoreDNS pod that starts before kube-proxy has programmed the API server's Service is not ready
 * until the next ask (measured: 6–8 s of the nftables start's wait for DNS). Every 2 s, with 15
 * failures allowed, keeps kubeadm's 30 s of tolerance. Applied while the Deployment's first pods
 * are still unscheduled (no node is Ready before the CNI), so it replaces no running pod.
 */
export const COREDNS_PROBE_PATCH = JSON.stringify({
  spec: { template: { spec: { containers: [{ name: 'coredns', readinessProbe: { periodSeconds: 2, failureThreshold: 15 } }] } } },
});

/** How many times (a second apart) the node asks to patch CoreDNS before it gives up. */
const COREDNS_PATCH_TRIES = 120;

/**
 * Runs in the control-plane node, whose kubectl reaches the API server as soon as kubeadm has
 * written admin.conf (the host's kubeconfig exists only when `kind create` ends): one `docker
 * exec` that retries in the node until kubeadm's addon phase has made the Deployment.
 */
const COREDNS_PATCH_SCRIPT = [
  'i=0',
  `until out=$(kubectl --kubeconfig=/etc/kubernetes/admin.conf --request-timeout=5s -n kube-system patch deployment coredns -p "$1" 2>&1); do`,
  `  i=$((i+1)); [ "$i" -ge ${COREDNS_PATCH_TRIES} ] && { echo "$out" >&2; exit 1; }; sleep 1`,
  'done',
].join('\n');

/**
 * Beside `kind create`: CoreDNS asked every 2 s whether it is ready. It waits for kubeadm to start
 * on the control plane, or for `createEnded` (kind ran kubeadm, so no need to ask). An
 * optimisation only: when it cannot be applied, the start goes on at kubeadm's pace and the
 * progress view says so.
 */
async function quickerDnsReadiness(ctx: ProvisionContext, createEnded: AbortSignal): Promise<void> {
  const node = `${ctx.name}-control-plane`;
  try {
    try {
      await nodesAnswer(
        { ...ctx, signal: AbortSignal.any([ctx.signal, createEnded]) },
        [kubeadmStarted(ctx)],
        `kubeadm to start on ${node}`,
      );
    } catch (err) {
      if (!createEnded.aborted || ctx.signal.aborted) throw err;
    }
    await run('docker', ['exec', node, 'sh', '-c', COREDNS_PATCH_SCRIPT, 'sh', COREDNS_PROBE_PATCH], {
      timeoutMs: (COREDNS_PATCH_TRIES + 10) * 1_000,
      signal: ctx.signal,
    });
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    const why = err instanceof CommandError ? lastLine(err.stderr) || howItEnded(err) : err instanceof Error ? err.message : String(err);
    ctx.note(`CoreDNS keeps kubeadm's 10 s readiness probe (${why.slice(0, 200)}); cluster DNS may take a few seconds longer.`);
  }
}

/**
 * Runs in a worker, with the images to unpack as arguments (and `--kind-cni` for kind's own CNI,
 * whose image the node's manifest names): each one the node holds and has not unpacked yet is
 * unpacked into containerd's overlayfs snapshots, so the kubelet's first containers start at
 * once. kind keeps its images packed in the node image, and a worker joining unpacked kindnetd
 * and kube-proxy only then, side by side with the control plane: 6.6–8 s of its 10 s to Ready
 * (measured here). `ctr images mount` unpacks and then mounts; only the unpack is wanted, so a
 * mount that fails is no matter, and the active snapshot it made is removed.
 */
const UNPACK_SCRIPT = [
  'pause=$(sed -n \'s/^ *sandbox_image *= *"\\(.*\\)"$/\\1/p\' /etc/containerd/config.toml | head -n 1)',
  'cni=',
  'if [ "${1:-}" = --kind-cni ]; then shift; cni=$(sed -n \'s/^ *image: *//p\' /kind/manifests/default-cni.yaml | head -n 1); fi',
  'held=$(ctr --namespace k8s.io images ls --quiet)',
  'for ref in $pause $cni "$@"; do',
  '  printf \'%s\\n\' "$held" | grep -qxF "$ref" || continue',
  '  m=$(mktemp -d)',
  '  ctr --namespace k8s.io images mount --snapshotter overlayfs "$ref" "$m" >/dev/null 2>&1',
  '  ctr --namespace k8s.io images unmount --rm "$m" >/dev/null 2>&1',
  '  rmdir "$m"',
  'done',
].join('\n');

/** What the workers' first containers run, besides the sandbox: the dataplane's and the CNI's images, and the labs'. */
function workerStartImages(ctx: ProvisionContext): string[] {
  const d = modeRecord(ctx.mode).dataplane;
  switch (d.kind) {
    case 'kube-proxy':
      return ['--kind-cni', `registry.k8s.io/kube-proxy:v${KUBERNETES_VERSION}`, ...ctx.images];
    case 'agent':
      return [...ctx.images];
    default:
      return unreachable(d);
  }
}

/**
 * Beside `kind create`: once a worker's containerd answers (kind has configured the nodes; the
 * workers then wait for the control plane), unpack what its first containers need there. Skipped
 * once create has ended (the kubelet is unpacking by then). An optimisation only: it never fails
 * the start.
 */
async function unpackAhead(ctx: ProvisionContext, createEnded: AbortSignal): Promise<void> {
  const workers = kindWorkerNames(ctx.mode, ctx.name);
  const signal = AbortSignal.any([ctx.signal, createEnded]);
  await Promise.all(
    workers.map(async (node) => {
      try {
        await nodesAnswer(
          { ...ctx, signal },
          [{ node, args: ['ctr', '--namespace', 'k8s.io', 'version'], not: 'containerd does not answer yet' }],
          `containerd on ${node}`,
        );
        await run('docker', ['exec', node, 'sh', '-c', UNPACK_SCRIPT, 'sh', ...workerStartImages(ctx)], {
          timeoutMs: ctx.timeouts.imageLoad,
          signal: ctx.signal,
        });
      } catch (err) {
        if (ctx.signal.aborted) throw err;
      }
    }),
  );
}

/** Whose pods and logs to look at when the dataplane does not come up. */
function dataplanePods(mode: Mode): string {
  const d = modeRecord(mode).dataplane;
  switch (d.kind) {
    case 'kube-proxy':
      return 'kube-proxy (`-l k8s-app=kube-proxy`)';
    case 'agent':
      return `the ${d.agent.daemonSet} agents (\`-l ${d.agent.podLabel}\`)`;
    default:
      return unreachable(d);
  }
}

/**
 * A DaemonSet of kube-system rolled out, stopped at once when one of its pods keeps exiting
 * (crash-watch.ts) instead of at the rollout's bound of minutes: the error names the node and the
 * log line, and, when the log says the host's kernel lacks the mode's modules, the fix for that.
 */
async function rolloutWatched(ctx: ProvisionContext, daemonSet: string, label: string, what: string): Promise<void> {
  const kubectl = ctx.cluster.kubectl;
  const r = rolloutArgs(ctx, 'daemonset', daemonSet);
  const over = new AbortController();
  const signal = AbortSignal.any([ctx.signal, over.signal]);
  const mods = modeRecord(ctx.mode).host.kernelModules;
  const fixFor = (line: string) =>
    mods && line.includes(mods.missingLog)
      ? `This host's kernel has no ${mods.what} (${mods.config}), so the ${modeRecord(ctx.mode).short} cluster cannot run here: use another mode, or a host or Docker VM whose kernel has ${mods.names[0]}.`
      : undefined;
  try {
    await Promise.race([
      kubectl(r.args, { ...r.opts, signal }),
      watchForCrashes(kubectl, { label, what, fixFor, intervalMs: ctx.timeouts.pollInterval, readMs: ctx.timeouts.quick, signal }).then(
        () => new Promise<never>(() => {}),
      ),
    ]);
  } finally {
    over.abort();
  }
}

/** The agent's DaemonSet rolled out, then the agent saying it replaces kube-proxy. */
async function waitForAgent(ctx: ProvisionContext, agent: Agent): Promise<void> {
  const kubectl = ctx.cluster.kubectl;
  await rolloutWatched(ctx, agent.daemonSet, agent.podLabel, `The ${agent.name} agent`);
  await waitUntil(
    async () => {
      try {
        const s = await kubectl(agentExec(agent, agent.status), {
          timeoutMs: ctx.timeouts.quick,
          signal: ctx.signal,
        });
        const line = s.stdout.split('\n').find((l) => l.startsWith('KubeProxyReplacement')) ?? '(no KubeProxyReplacement line)';
        return KPR_TRUE.test(s.stdout) ? { done: true, value: undefined } : { done: false, seen: line };
      } catch (err) {
        if (err instanceof CommandError && err.kind !== 'aborted' && err.kind !== 'tool-missing')
          return { done: false, seen: err.details ?? err.message };
        throw err;
      }
    },
    {
      timeoutMs: ctx.timeouts.kubeProxyReplacement,
      intervalMs: ctx.timeouts.pollInterval,
      signal: ctx.signal,
      what: `${agent.name} to report \`KubeProxyReplacement: True\``,
    },
  );
}

export const ACTIONS: readonly Action[] = [
  {
    id: 'preflight',
    title: 'Check Docker, kind and the host',
    async run(ctx) {
      const report = await runPreflight({ modes: [ctx.mode], system: ctx.system, signal: ctx.signal });
      const err = preflightError(report);
      if (err) throw err;
      ctx.ciliumInstaller = report.ciliumInstaller;
    },
  },
  {
    id: 'images',
    title: 'Prepare the node image with the lab images',
    // Built once (lab-node-image.ts) and reused by every later start: the workers start with the
    // images in their containerd, so nothing is imported beside kubeadm.
    fix: () => 'The lab images are an optimisation: `docker pull` them again, or remove them locally to skip this step.',
    async run(ctx) {
      ctx.workerImage = await labNodeImage({
        base: nodeImage(),
        images: ctx.images,
        signal: ctx.signal,
        quickMs: ctx.timeouts.quick,
        longMs: ctx.timeouts.imageLoad,
        note: ctx.note,
      });
    },
  },
  {
    id: 'create',
    title: 'Create the kind cluster (3 nodes)',
    fix: (ctx) =>
      `Check \`docker ps -a --filter name=${ctx.name}\` and free disk space; \`dplab doctor --mode ${ctx.mode}\` checks the host.`,
    async run(ctx) {
      ensureKubeconfigDir(ctx.mode);
      const overlay = kindOverlay();
      if (overlay) ctx.note(`Using the kind overlay of ${overlay.name} (DPLAB_KIND_OVERLAY).`);
      // --wait 0s: kind's own wait needs a CNI (absent in Cilium mode until we install it); the
      // waits below are ours, bounded and shown as separate steps.
      const args = [
        'create',
        'cluster',
        '--name',
        ctx.name,
        '--config',
        kindConfigFor(ctx.mode, ctx.workerImage),
        '--kubeconfig',
        ctx.kubeconfig,
        '--wait',
        '0s',
      ];
      if (ctx.retain) args.push('--retain');
      // CoreDNS's probe is made quicker and the workers' first images unpacked while kind works; a failed create cancels both.
      const createEnded = new AbortController();
      await allOrCancel(ctx.signal, [
        // Only a create that succeeded ends the waits beside it early: a failed one cancels them.
        (signal) => run('kind', args, { timeoutMs: ctx.timeouts.create, signal }).then(() => createEnded.abort()),
        (signal) => quickerDnsReadiness({ ...ctx, signal }, createEnded.signal),
        (signal) => unpackAhead({ ...ctx, signal }, createEnded.signal),
      ]);
    },
  },
  {
    id: 'cilium-install',
    title: `Install Cilium ${CILIUM_VERSION} as kube-proxy replacement`,
    modes: MODES.filter((m) => runsAgent(m, CILIUM)),
    fix: (ctx) => logsFix(ctx, `the ${CILIUM.daemonSet} pods (\`-l ${CILIUM.podLabel}\`)`),
    async run(ctx) {
      const c = ciliumInstallCommand(ctx.name, ctx.kubeconfig, ctx.ciliumInstaller);
      await run(c.file, c.args, { timeoutMs: ctx.timeouts.ciliumInstall, signal: ctx.signal, ...(c.env ? { env: c.env } : {}) });
    },
  },
  {
    id: 'nodes-ready',
    title: 'Wait for the nodes to be Ready',
    fix: (ctx) => logsFix(ctx, 'the kubelet (`docker exec <node> journalctl -u kubelet`)'),
    async run(ctx) {
      // `kubectl wait --all` waits only for the Nodes that exist: a worker whose kubelet never
      // registered (measured: kind inside a seat's Docker-in-Docker on a cgroup v1 host) would
      // leave a "ready" cluster of one node. Every node of the mode's kind config must be there.
      const expected = kindNodeCount(ctx.mode);
      await waitUntil(
        async () => {
          const h = await nodeHealth(ctx.cluster, { timeoutMs: ctx.timeouts.quick, signal: ctx.signal });
          return h.total >= expected ? { done: true, value: h } : { done: false, seen: `${h.total} of ${expected} nodes registered` };
        },
        {
          timeoutMs: ctx.timeouts.rollout,
          intervalMs: 1_000,
          signal: ctx.signal,
          what: `all ${expected} nodes of ${ctx.name} to register with the API server`,
          fix: `A node that never registers has a kubelet that does not start: \`docker exec ${ctx.name}-worker journalctl -u kubelet\` says why.`,
        },
      );
      await ctx.cluster.kubectl(['wait', '--for=condition=Ready', 'nodes', '--all', kubectlTimeoutFlag(ctx.timeouts.rollout)], {
        timeoutMs: ctx.timeouts.rollout + ctx.timeouts.grace,
        signal: ctx.signal,
      });
    },
  },
  {
    id: 'dataplane',
    title: 'Wait for the dataplane (kube-proxy or Cilium)',
    fix: (ctx) => logsFix(ctx, dataplanePods(ctx.mode)),
    async run(ctx) {
      const d = modeRecord(ctx.mode).dataplane;
      switch (d.kind) {
        case 'kube-proxy':
          return rolloutWatched(ctx, 'kube-proxy', 'k8s-app=kube-proxy', 'kube-proxy');
        case 'agent':
          return waitForAgent(ctx, d.agent);
        default:
          return unreachable(d);
      }
    },
  },
  {
    id: 'coredns',
    title: 'Wait for cluster DNS (CoreDNS)',
    fix: (ctx) => logsFix(ctx, 'CoreDNS (`-l k8s-app=kube-dns`)'),
    async run(ctx) {
      const r = rolloutArgs(ctx, 'deployment', 'coredns');
      await ctx.cluster.kubectl(r.args, r.opts);
    },
  },
];

/** The actions for one mode, in order. */
export function provisionActions(mode: Mode): Action[] {
  return ACTIONS.filter((a) => !a.modes || a.modes.includes(mode));
}

/** Wrap an action's failure: which step failed as the headline, the cause's fix, its output as details. */
export function actionFailure(action: Action, ctx: ProvisionContext, err: unknown): DplabError {
  if (action.id === 'preflight' && err instanceof DplabError) {
    return new DplabError(`Cannot start the ${ctx.mode} cluster: ${err.message}`, {
      fix: err.fix,
      details: err.details,
      status: err.status,
      cause: err,
    });
  }
  const cause = err instanceof Error ? err.message : String(err);
  const fix = err instanceof DplabError && err.fix ? err.fix : action.fix?.(ctx);
  const details = err instanceof DplabError ? err.details : err instanceof Error ? err.stack : undefined;
  return new DplabError(`Starting the ${ctx.mode} cluster failed at "${action.title}": ${cause}`, {
    fix,
    details,
    status: err instanceof DplabError && err.status < 500 ? err.status : 500,
    cause: err,
  });
}
