/**
 * Provisioning as an ordered list of actions (as kind does it): each has an id, a title the
 * UI shows, and `run(ctx)`. The manager runs them in order, emits start/end/fail, and cleans up.
 */
import { allOrCancel, CommandError, howItEnded, run } from '../base/exec.ts';
import { DplabError } from '../base/errors.ts';
import { preflightError, runPreflight, type CiliumInstaller, type PreflightSystem } from '../preflight/index.ts';
import { ensureKubeconfigDir, nodeHealth } from './kube.ts';
import type { ClusterHandle } from './handle.ts';
import { kindConfigFor, kindNodeCount, kindOverlay, kindWorkerNames } from './kind-overlay.ts';
import { agentExec, CILIUM, MODES, modeRecord, runsAgent, unreachable, type Agent, type Mode } from '../catalogue/modes.ts';
import { kubectlTimeoutFlag, type ProvisionTimeouts } from './timeouts.ts';
import { CILIUM_HELM_REPO, CILIUM_VERSION } from '../base/versions.ts';
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
  /** Images to load into the nodes when present locally. */
  images: readonly string[];
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
  /**
   * Runs beside the actions after it instead of before them: it starts when the actions before it
   * have ended, and the cluster is ready only when it has ended too. Its failure stops the run.
   */
  beside?: boolean;
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
 * Wait, beside `kind create`, until `nodes` can take an image: kind has started kubeadm on the
 * control plane, so its configuration step, which may patch and restart every node's containerd
 * (`containerdConfigPatches`), is over; and each node's containerd answers.
 */
async function nodesTakeImages(ctx: ProvisionContext, nodes: readonly string[]): Promise<void> {
  const probes = [
    kubeadmStarted(ctx),
    ...nodes.map((node) => ({ node, args: ['ctr', '--namespace', 'k8s.io', 'version'], not: 'containerd does not answer yet' })),
  ];
  await nodesAnswer(ctx, probes, `the nodes of ${ctx.name} to take images`);
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
    title: 'Load lab images into the nodes',
    // Loading needs only the nodes' containerd, not a cluster: it starts beside `kind create`, as
    // soon as kind has configured the nodes, and runs while kubeadm and the waits after it do.
    beside: true,
    fix: () => 'Loading images is an optimisation: `docker pull` them again, or remove them locally to skip this step.',
    async run(ctx) {
      const present: string[] = [];
      for (const image of ctx.images) {
        try {
          await run('docker', ['image', 'inspect', '--format', '{{.Id}}', image], { timeoutMs: ctx.timeouts.quick, signal: ctx.signal });
          present.push(image);
        } catch (err) {
          if (err instanceof CommandError && err.kind === 'failed') {
            ctx.note(`Skipped ${image}: not present locally (the nodes will pull it when a lab needs it).`);
            continue;
          }
          throw err;
        }
      }
      if (present.length === 0) return;
      // Into the workers only, where lab pods run (the control plane keeps kind's NoSchedule
      // taint): one import fewer beside the nodes' start, which it slows (2 cores, measured).
      const workers = kindWorkerNames(ctx.mode, ctx.name);
      await nodesTakeImages(ctx, workers.length ? workers : [`${ctx.name}-control-plane`]);
      const nodes = workers.length ? ['--nodes', workers.join(',')] : [];
      for (const image of present) {
        try {
          await run('kind', ['load', 'docker-image', '--name', ctx.name, ...nodes, image], {
            timeoutMs: ctx.timeouts.imageLoad,
            signal: ctx.signal,
          });
        } catch (err) {
          // Preloading is an optimisation. It fails for multi-arch images under Docker's
          // containerd image store (Docker Desktop's default, new Docker installs: "ctr: content
          // digest … not found"); the nodes pull the image themselves, so the start goes on.
          if (!(err instanceof CommandError) || err.kind === 'aborted') throw err;
          const why = lastLine(err.stderr) || err.message;
          ctx.note(`Could not preload ${image} (${why.slice(0, 200)}); the nodes will pull it when a lab needs it.`);
        }
      }
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
        kindConfigFor(ctx.mode),
        '--kubeconfig',
        ctx.kubeconfig,
        '--wait',
        '0s',
      ];
      if (ctx.retain) args.push('--retain');
      // CoreDNS's probe is made quicker while kind works; a failed create cancels it.
      const createEnded = new AbortController();
      await allOrCancel(ctx.signal, [
        (signal) => run('kind', args, { timeoutMs: ctx.timeouts.create, signal }).finally(() => createEnded.abort()),
        (signal) => quickerDnsReadiness({ ...ctx, signal }, createEnded.signal),
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
