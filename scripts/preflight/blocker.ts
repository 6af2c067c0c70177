/**
 * What keeps any kind cluster from starting on this machine, the first thing to fix: Docker
 * (not installed, not running, not usable by this user), then kind. The lab page asks, so that
 * without one it offers the recorded replay and names this blocker, never a Start that cannot work.
 */
import type { Mode } from '../catalogue/modes.ts';
import type { ErrorJson } from '../wire/errors.ts';
import { dockerBlocker } from './index.ts';
import { checkKind } from './kind.ts';
import { realSystem } from './system.ts';

export async function startBlocker(mode: Mode, system = realSystem, signal?: AbortSignal): Promise<ErrorJson | undefined> {
  const docker = await dockerBlocker(system, signal);
  if (docker) return docker;
  const kind = (await checkKind([mode], signal)).find((f) => f.status === 'fail');
  return kind ? { message: kind.detail, fix: kind.fix } : undefined;
}
