/** The browser tier needs the built course; build it once per run when it is missing or stale. */
import { buildIsStale, buildSite } from '../scripts/base/site-build.ts';

export default async function setup(): Promise<void> {
  // For quick runs of the other tiers while editing: DPLAB_SKIP_BUILD=1 npx vitest run scripts/…
  if (process.env.DPLAB_SKIP_BUILD === '1') return;
  const { stale, reason } = buildIsStale();
  if (stale) {
    console.log(`[e2e] building the course (${reason})`);
    await buildSite();
  }
}
