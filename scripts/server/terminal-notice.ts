/**
 * What a lab terminal says before the prompt when its cluster is not ready, from the cluster
 * manager's status, so the learner knows why kubectl will fail. Every page with a terminal
 * shows the cluster's Start button in its top bar, and `dplab` is on the terminal's PATH, so
 * both fixes named here exist where the notice is read.
 */
import type { Mode } from '../catalogue/modes.ts';
import type { ClusterService } from '../services/runner-services.ts';

/** What a lab terminal that printed one of the notices below says once its cluster is ready. */
export function readyNotice(mode: Mode): string {
  return `The ${mode} cluster is ready: kubectl in this shell reaches it now.`;
}

/**
 * What a lab terminal prints before its prompt when the cluster is not usable yet, or null
 * when it is ready. Never throws: a terminal must open whatever the cluster's state.
 */
export async function terminalNotice(mode: Mode, manager: Pick<ClusterService, 'status'>, signal?: AbortSignal): Promise<string | null> {
  try {
    const s = await manager.status(mode, { signal });
    switch (s.state) {
      case 'ready':
        return null;
      case 'provisioning':
        return `The ${mode} cluster is starting (its progress is in the bar at the top). kubectl will work once it is ready.`;
      case 'broken':
        return `The ${mode} cluster is not healthy${s.error ? `: ${s.error.message}` : '.'} Press Start in the bar at the top, or run \`dplab down ${mode}\` then \`dplab up ${mode}\` here.`;
      default:
        // With an error, its own words and fix (Docker down, kind missing): never "press Start"
        // after Start failed for want of them.
        if (s.error) {
          const why = `${s.error.message}${s.error.fix ? ` ${s.error.fix}` : ''}`;
          return s.progress ? `The ${mode} cluster could not start: ${why}` : `The ${mode} cluster cannot be checked: ${why}`;
        }
        return `The ${mode} cluster is not running. Press Start in the bar at the top, or run \`dplab up ${mode}\` here.`;
    }
  } catch (err) {
    return `The ${mode} cluster's state is unknown (${err instanceof Error ? err.message : String(err)}). Run \`dplab status\` here.`;
  }
}
