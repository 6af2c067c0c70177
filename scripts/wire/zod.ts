/**
 * zod 4 mini as the wire schemas use it; every wire module and everything that handles a wire
 * schema imports `z` from here (`npm run deps` refuses `zod/v4-mini` anywhere else). The rest of
 * the runner (lab schemas, Kubernetes objects) stays on zod 3 (`import { z } from 'zod'`).
 *
 * Jitless: zod 4 would compile object parsers with `new Function`, which the course pages' CSP
 * (no 'unsafe-eval') refuses, and it tries as each object schema is made, so this runs before
 * any wire module makes one. No locale is loaded: validate.ts words issues without one.
 */
import { config } from 'zod/v4-mini';

config({ jitless: true });

export * as z from 'zod/v4-mini';
