/**
 * Preflight: every check the modes asked for, as findings. `dplab doctor` prints them;
 * provisioning runs the same checks for one mode and stops at the first failure.
 */
import { DplabError } from '../base/errors.ts';
import { modeRecord } from '../catalogue/modes.ts';
import { checkDocker, type DockerInfo } from './docker.ts';
import { checkKind } from './kind.ts';
import { checkCgroups, checkInotify, checkKernelModules, checkKernelVersion } from './kernel.ts';
import { checkMemory } from './memory.ts';
import { checkSeatCapacity } from './capacity.ts';
import { realSystem } from './system.ts';
import { checkCiliumInstaller, checkKubectl, needsCilium, type CiliumInstaller } from './tools.ts';
import type { Finding, PreflightOptions } from './types.ts';

export type { PreflightOptions, PreflightSystem } from './types.ts';
export type { CiliumInstaller } from './tools.ts';
export interface PreflightReport {
  findings: Finding[];
  /** True when no finding failed. */
  ok: boolean;
  /** What `docker info` said, when the daemon answered (Docker Desktop detection, VM memory). */
  docker?: DockerInfo;
  /** The Cilium installer to use, when the Cilium mode was asked for and one works. */
  ciliumInstaller?: CiliumInstaller;
}

export async function runPreflight(opts: PreflightOptions): Promise<PreflightReport> {
  const system = opts.system ?? realSystem;
  const { modes, signal } = opts;
  // Independent tools are asked in parallel; kernel and memory checks read files only.
  const [docker, kind, kubectl, cilium] = await Promise.all([
    checkDocker(system, signal),
    checkKind(modes, signal),
    checkKubectl(signal),
    needsCilium(modes) ? checkCiliumInstaller(modes, signal) : Promise.resolve(undefined),
  ]);
  const findings: Finding[] = [...docker.findings, ...kind, kubectl];
  if (cilium) findings.push(cilium.finding);
  findings.push(checkInotify(system, docker.info));
  const host = [
    ...modes.map((m) => checkKernelModules(modeRecord(m), system, docker.info)),
    checkKernelVersion(modes, docker.info),
    checkCgroups(modes, docker.info, system),
  ];
  for (const f of host) if (f) findings.push(f);
  findings.push(checkMemory(system, modes, opts.clusters ?? modes.length, docker.info));
  if (opts.seats) findings.push(checkSeatCapacity(system, opts.seats, modes, docker.info));
  return { findings, ok: findings.every((f) => f.status !== 'fail'), docker: docker.info, ciliumInstaller: cilium?.installer };
}

/**
 * Docker comes before kind, everywhere a blocker is named (`dplab up`, `doctor`, `status`, the
 * cluster panel): when listing clusters failed, this says whether Docker is the first reason.
 */
export async function dockerBlocker(system = realSystem, signal?: AbortSignal): Promise<{ message: string; fix?: string } | undefined> {
  const { findings } = await checkDocker(system, signal);
  const failed = findings.find((f) => f.status === 'fail');
  return failed ? { message: failed.detail, fix: failed.fix } : undefined;
}

/** The error provisioning stops with: the first failure as the headline, the rest as details. */
export function preflightError(report: PreflightReport): DplabError | undefined {
  const failed = report.findings.filter((f) => f.status === 'fail');
  if (failed.length === 0) return undefined;
  const [first, ...rest] = failed;
  return new DplabError(first.detail, {
    fix: first.fix,
    details: rest.length
      ? ['Other problems found by `dplab doctor`:', ...rest.map((f) => `- ${f.title}: ${f.detail}${f.fix ? ` Fix: ${f.fix}` : ''}`)].join(
          '\n',
        )
      : undefined,
    status: 503,
  });
}
