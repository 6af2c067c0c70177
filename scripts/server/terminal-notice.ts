/**
 * What a lab terminal says before the prompt when its cluster is not ready, from the cluster
 * manager's status, so the learner knows why kubectl will fail.
 */
import type { Mode } from '../clusters/modes.ts';
import type { ClusterService } from '../runner/services.ts';

/**
 * What a lab terminal prints before its prompt when the cluster is not usable yet, or null
 * when it is ready. Never throws: a terminal must open whatever the cluster's state.
 */
export async function terminalNotice(mode: Mode, manager: Pick<ClusterService, 'status'>): Promise<string | null> {
  try {
    const s = await manager.status(mode);
    switch (s.state) {
      case 'ready':
        return null;
      case 'provisioning':
        return `The ${mode} cluster is starting (see the cluster panel). kubectl will work once it is ready.`;
      case 'broken':
        return `The ${mode} cluster is not healthy${s.error ? `: ${s.error.message}` : '.'} Recreate it from the cluster panel, or run \`dplab down ${mode}\` then \`dplab up ${mode}\`.`;
      default:
        return s.error && !s.progress
          ? `The ${mode} cluster cannot be checked: ${s.error.message}${s.error.fix ? ` ${s.error.fix}` : ''}`
          : `The ${mode} cluster is not running. Start it from the cluster panel or run \`dplab up ${mode}\`.`;
    }
  } catch (err) {
    return `The ${mode} cluster's state is unknown (${err instanceof Error ? err.message : String(err)}). Run \`dplab status\`.`;
  }
}
