/**
 * How an infrastructure problem reads when it stops a check, a solve or a reset. The kind of a
 * CommandError decides (exec.ts classified it); we never read error text here. These are
 * `error` results: the learner did nothing wrong.
 */
import { existsSync } from 'node:fs';
import { CommandError, DOCKER_DENIED } from '../base/exec.ts';
import { DplabError } from '../base/errors.ts';
import type { ClusterHandle } from './handle.ts';
import type { Mode } from '../catalogue/modes.ts';

export interface ClusterProblem {
  message: string;
  fix?: string;
  details?: string;
}

/** Named where every page can act on it: the explorer has no cluster bar of its own. */
const upFix = (mode: Mode) =>
  `Start it with \`dplab up ${mode}\`, or with Start on a lab page or on the Clusters page (/clusters/), then try again.`;

/** Before spawning anything: a cluster whose kubeconfig was never written is not running. */
export function clusterAbsent(cluster: ClusterHandle): ClusterProblem | undefined {
  if (existsSync(cluster.kubeconfig)) return undefined;
  return { message: `The ${cluster.mode} cluster is not running (there is no ${cluster.name} cluster yet).`, fix: upFix(cluster.mode) };
}

/** Any error thrown while talking to the cluster, worded for the learner. */
export function describeClusterError(err: unknown, mode: Mode, what: string, timedOut: boolean): ClusterProblem {
  if (err instanceof CommandError) {
    const details = err.details;
    switch (err.kind) {
      case 'cluster-missing':
        return { message: `The ${mode} cluster is not running, so ${what} could not look at it.`, fix: upFix(mode), details };
      case 'cluster-unreachable':
        return { message: `The ${mode} cluster is not reachable: its API server did not answer.`, fix: err.fix ?? upFix(mode), details };
      case 'daemon-down':
        return {
          message:
            err.message === DOCKER_DENIED.message
              ? `${DOCKER_DENIED.message} So the ${mode} cluster cannot be reached from here.`
              : `Docker is not running, so the ${mode} cluster cannot be reached.`,
          fix: err.fix,
          details,
        };
      case 'tool-missing':
        return { message: err.message, fix: err.fix, details };
      case 'timeout':
        return { message: `${capitalise(what)} timed out: \`${err.command}\` did not answer in time.`, fix: err.fix, details };
      case 'aborted':
        return timedOut
          ? {
              message: `${capitalise(what)} timed out before the cluster answered.`,
              fix: 'Check that the cluster responds (`dplab status`), then try again.',
              details,
            }
          : { message: `${capitalise(what)} was cancelled.`, details };
      case 'failed':
        return { message: `${capitalise(what)} could not read the cluster: ${err.message}`, fix: err.fix, details };
    }
  }
  if (err instanceof DplabError) return { message: err.message, fix: err.fix, details: err.details };
  return {
    message: `${capitalise(what)} itself failed: ${err instanceof Error ? err.message : String(err)}`,
    details: err instanceof Error ? err.stack : undefined,
  };
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
