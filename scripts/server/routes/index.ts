/** All API routes. Each area keeps its routes in its own file; add one spread per area. */
import type { Route } from '../router.ts';
import { healthRoutes } from './health.ts';
import { sessionRoutes } from './session.ts';

export const ROUTES: readonly Route[] = [
  ...healthRoutes,
  ...sessionRoutes,
];
