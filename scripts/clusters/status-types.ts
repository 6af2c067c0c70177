/** The shapes `status()` returns and the API/panel show: the wire types (scripts/wire/clusters.ts). */
export type { ActionProgress, ClusterStatus, Progress } from '../wire/clusters.ts';
export type { ErrorJson } from '../wire/errors.ts';
