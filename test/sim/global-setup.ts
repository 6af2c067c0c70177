/**
 * test:sim's one-time set-up: refuse clearly where the tier cannot run (not Linux, not root),
 * and build (or reuse) the components once, with progress on stderr, before any test starts.
 */
import { ensureSimBinaries } from '../../scripts/sim/build.ts';

export default async function setup(): Promise<void> {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) {
    throw new Error('npm run test:sim needs Linux and root (network namespaces, a bridge, kube-proxy rules). Run it as root on Linux.');
  }
  const started = Date.now();
  const r = await ensureSimBinaries({ onProgress: (l) => process.stderr.write(`[sim build] ${l}\n`) });
  process.stderr.write(
    `[sim build] ${r.binDir}: built ${r.built.join(', ') || 'nothing'}, reused ${r.reused.join(', ') || 'nothing'} in ${Math.round((Date.now() - started) / 1000)} s\n`,
  );
}
