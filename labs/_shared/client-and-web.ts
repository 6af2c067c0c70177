/**
 * What the checks that run a command in the `client` pod against web read: the command's result
 * and web's pods (to tell which answers came from a ready web pod). first-service's curl loop and
 * headless's nslookup share it.
 */
import { gatherPodCommand, listBySelector } from '../../scripts/labs/checks/index.ts';
import { observationsOf, schemas } from '../../scripts/labs/checks/schemas.ts';
import type { GatherContext } from '../../scripts/labs/checks/types.ts';

export const clientAndWebObservations = observationsOf({ client: schemas.podCommand, web: schemas.kubeList });

export async function gatherClientAndWeb(ctx: GatherContext, command: readonly string[]) {
  const [client, web] = await Promise.all([gatherPodCommand(ctx, 'client', command), listBySelector(ctx, 'pods', 'app=web')]);
  return { client, web };
}
