/**
 * "Apply solution": runs a step's solution commands the way a learner would type them, with
 * `bash -c`, KUBECONFIG of the lab's cluster and the lab workspace as the working folder.
 *
 * Why a shell is safe here: the script is built only from our own lab data (labs/<id>/lab.ts,
 * reviewed like code). The browser and the CLI send ids (lab, step, mode), which are looked
 * up in the registry; nothing the client sends becomes part of the script or its environment.
 */
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { pathWith, run, TIMEOUT_FACTOR, type CommandResult } from '../base/exec.ts';
import { DplabError } from '../base/errors.ts';
import { type ClusterHandle } from '../clusters/handle.ts';
import { clusterHandle } from '../clusters/providers.ts';
import type { Mode } from '../catalogue/modes.ts';
import { workspaceDir } from '../base/paths.ts';
import { ownFolder, runAsUser, shellUser, writeAsUser, type ShellUser } from '../terminals/shell-user.ts';
import { openDockerRelay } from './docker-relay.ts';
import { clusterAbsent, describeClusterError } from '../clusters/cluster-errors.ts';
import { solutionFor, type Lab, type Step } from './schema.ts';
import { labFilePath } from './registry.ts';

/**
 * Solutions wait for rollouts and a first image pull; scale-compare's clean-up deletes a thousand
 * Services one request at a time, which took more than 5 minutes on a 2-core machine running kind.
 * Stretched by DPLAB_TIMEOUT_FACTOR like every other bound: under the QEMU guest's emulation,
 * creating scale-compare's 1,000 Services alone took longer than 12 minutes.
 */
const SOLVE_TIMEOUT_MS = 12 * 60_000 * TIMEOUT_FACTOR;

export interface SolveResult {
  lab: string;
  step: string;
  mode: Mode;
  commands: string[];
  output: string;
  durationMs: number;
}

/** The environment a lab terminal has (see scripts/terminals/environment.ts), so solutions and snippets agree. */
function labEnv(cluster: ClusterHandle, lab: Lab): Record<string, string> {
  return { KUBECONFIG: cluster.kubeconfig, DPLAB_MODE: cluster.mode, DPLAB_CLUSTER: cluster.name, DPLAB_NAMESPACE: lab.namespace };
}

/**
 * Copy the lab's workspace files to `<workspace>/<lab id>/`, where snippets expect them. In a
 * portal seat the learner's shell is the seat's own user (terminals/shell-user.ts), and the files
 * are written as that user: root never opens a path inside a learner's workspace.
 */
export async function prepareWorkspace(lab: Lab): Promise<string> {
  const dir = join(workspaceDir(), lab.id);
  const user = shellUser();
  if (user) {
    // The workspace folder itself sits in the seat's root-owned folder, out of the learner's reach.
    ownFolder(workspaceDir(), user);
    await writeAsUser(
      user,
      dir,
      new Map(lab.setup.workspace.map((rel) => [basename(rel), readFileSync(labFilePath(lab.id, rel), 'utf8')])),
    );
    return dir;
  }
  mkdirSync(dir, { recursive: true });
  for (const rel of lab.setup.workspace) copyFileSync(labFilePath(lab.id, rel), join(dir, basename(rel)));
  return dir;
}

/**
 * The solution as the seat's user, whose `docker` is the runner's relay (docker-relay.ts): its
 * `docker exec <node> …` reach this seat's nodes through the runner, and nothing else of Docker.
 */
async function solveAsUser(
  user: ShellUser,
  cluster: ClusterHandle,
  script: string[],
  opts: { cwd: string; timeoutMs: number; signal?: AbortSignal; extra: Record<string, string> },
): Promise<CommandResult> {
  const relay = await openDockerRelay(cluster, user, opts.signal);
  try {
    // The relay's `docker` first, then the cluster's own programs (the sim's kubectl), then PATH.
    const path = pathWith([relay.bin, ...(cluster.pathFirst ?? [])]);
    return await runAsUser(user, 'bash', script, { ...opts, extra: { ...opts.extra, PATH: path } });
  } finally {
    await relay.close();
  }
}

/** The script bash runs: stop at the first failing command, including inside pipes. */
function solutionScript(step: Step, mode: Mode): string {
  return ['set -eo pipefail', ...solutionFor(step, mode)].join('\n');
}

export async function applySolution(
  lab: Lab,
  step: Step,
  mode: Mode,
  opts: { signal?: AbortSignal; cluster?: ClusterHandle } = {},
): Promise<SolveResult> {
  const cluster = opts.cluster ?? clusterHandle(mode);
  const absent = clusterAbsent(cluster);
  if (absent) throw new DplabError(absent.message, { fix: absent.fix, status: 409 });
  await prepareWorkspace(lab);
  try {
    // In a portal seat, as the seat's own user, like the learner's shell (see prepareWorkspace).
    const user = shellUser();
    const how = { cwd: workspaceDir(), timeoutMs: SOLVE_TIMEOUT_MS, signal: opts.signal };
    const script = ['-c', solutionScript(step, mode)];
    const r = user
      ? await solveAsUser(user, cluster, script, { ...how, extra: labEnv(cluster, lab) })
      : await run('bash', script, { ...how, env: labEnv(cluster, lab), pathFirst: cluster.pathFirst });
    return {
      lab: lab.id,
      step: step.id,
      mode,
      commands: solutionFor(step, mode),
      output: `${r.stdout}${r.stderr}`,
      durationMs: Math.round(r.durationMs),
    };
  } catch (err) {
    const p = describeClusterError(err, mode, `the solution of step ${step.id}`, false);
    throw new DplabError(p.message, { fix: p.fix, details: p.details, status: 502, cause: err });
  }
}
