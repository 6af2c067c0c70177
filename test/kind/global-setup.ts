/**
 * test:kind's one-time set-up: build (or reuse) the kind test environment with progress on
 * stderr, then put its environment (DOCKER_HOST, PATH, DPLAB_KIND_OVERLAY) into this process,
 * which the test workers inherit. The engine stays up afterwards (`npm run testenv -- down` stops it).
 */
import { ensureTestEnv } from './environment.ts';

export default async function setup(): Promise<void> {
  const started = Date.now();
  const env = await ensureTestEnv({ say: (l) => process.stderr.write(`[testenv] ${l}\n`) });
  Object.assign(process.env, env.env);
  process.stderr.write(`[testenv] ready in ${Math.round((Date.now() - started) / 1000)} s: ${env.nodeImage}\n`);
}
