/** All API routes. Each area keeps its routes in its own file; add one spread per area. */
import type { Route } from '../router.ts';
import { healthRoutes } from './health.ts';
import { sessionRoutes } from './session.ts';
import { clustersRoutes } from './clusters.ts';
import { labRoutes } from './labs.ts';
import { dataplaneRoutes } from './dataplane.ts';

export const ROUTES: readonly Route[] = [
  ...healthRoutes,
  ...sessionRoutes,
  ...clustersRoutes,
  ...labRoutes,
  ...dataplaneRoutes,
];
