/**
 * `npm run testenv -- <up|down|status|env>`: the kind test environment (README "Real kind on
 * these machines"). `up` builds or reuses everything and starts the engine; `env` prints the
 * shell lines that point dplab at it; `down` deletes its clusters and stops its engine; `status`
 * says what is there. Test-only: nothing in scripts/ imports this folder.
 */
import { existsSync, readFileSync } from 'node:fs';
import { DplabError } from '../../scripts/base/errors.ts';
import { run } from '../../scripts/base/exec.ts';
import { engineAnswers, engineEnv, engineInfo, stopEngine } from './engine.ts';
import { ensureGuestEnv, ensureTestEnv, guestPaths } from './environment.ts';
import { guestDockerHost, guestEngine, stopGuest } from './guest.ts';
import { engineHost, paths } from './layout.ts';

const USAGE = `usage: npm run testenv -- <command> [--guest]
  up      build (or reuse) the Go programs, root filesystems, images and node image; start the engine
  env     print the shell lines that point docker, kind and dplab at it (eval "$(npm run -s testenv -- env)")
  status  the engine, the node image and the clusters in it
  down    delete the environment's kind clusters and stop its engine (the caches stay)
With --guest: the same for the IPVS guest (a QEMU guest whose kernel has ip_vs, with Docker of its own);
\`up --guest\` brings up the host environment first.`;

const say = (l: string) => process.stderr.write(`[testenv] ${l}\n`);

async function clusterNames(opts: { env: Record<string, string> }): Promise<string[]> {
  const r = await run('kind', ['get', 'clusters'], { ...opts, timeoutMs: 60_000 }).catch(() => ({ stdout: '' }));
  return r.stdout.trim().split('\n').filter(Boolean);
}

async function main(argv: string[]): Promise<number> {
  const cmd = argv[0];
  const guest = argv.includes('--guest');
  process.env.PATH = `${paths.bin()}:${process.env.PATH ?? ''}`;
  if (cmd === 'up') {
    const started = Date.now();
    const host = await ensureTestEnv({ say });
    const env = guest ? await ensureGuestEnv(host, { say }) : host;
    say(`up in ${Math.round((Date.now() - started) / 1000)} s. Use it: source ${guest ? guestPaths.envFile() : paths.envFile()}`);
    process.stdout.write(`${env.nodeImage}\n`);
    return 0;
  }
  if (cmd === 'env') {
    const file = guest ? guestPaths.envFile() : paths.envFile();
    if (!existsSync(file))
      throw new DplabError('The test environment is not set up.', {
        fix: `Run \`npm run testenv -- up${guest ? ' --guest' : ''}\` first.`,
      });
    process.stdout.write(readFileSync(file, 'utf8'));
    return 0;
  }
  if (cmd === 'status') {
    if (await engineAnswers()) {
      const info = await engineInfo();
      process.stdout.write(
        `engine: Docker ${info.serverVersion}, cgroup v${info.cgroupVersion}, kernel ${info.kernelVersion} (${engineHost()})\n`,
      );
      process.stdout.write(`clusters: ${(await clusterNames(engineEnv() as { env: Record<string, string> })).join(', ') || 'none'}\n`);
    } else process.stdout.write(`engine: not running (${engineHost()})\n`);
    const g = await run('docker', ['info', '--format', '{{.KernelVersion}}'], { ...guestEngine(), timeoutMs: 10_000 }).catch(
      () => undefined,
    );
    process.stdout.write(
      g
        ? `guest: Docker on Linux ${g.stdout.trim()} (${guestDockerHost()}), clusters: ${(await clusterNames(guestEngine() as { env: Record<string, string> })).join(', ') || 'none'}\n`
        : 'guest: not running\n',
    );
    return 0;
  }
  if (cmd === 'down') {
    if (guest) {
      for (const name of await clusterNames(guestEngine() as { env: Record<string, string> }))
        await run('kind', ['delete', 'cluster', '--name', name], { ...guestEngine(), timeoutMs: 10 * 60_000 });
      const overlay = existsSync(guestPaths.overlay())
        ? (JSON.parse(readFileSync(guestPaths.overlay(), 'utf8')) as { nodeImage?: string })
        : {};
      await stopGuest(overlay.nodeImage, say);
    } else await stopEngine(say);
    return 0;
  }
  process.stderr.write(`${USAGE}\n`);
  return cmd === undefined || cmd === 'help' || cmd === '--help' ? 0 : 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof DplabError) {
      process.stderr.write(`[testenv] ${err.message}\n${err.fix ? `  fix: ${err.fix}\n` : ''}${err.details ? `${err.details}\n` : ''}`);
    } else {
      process.stderr.write(`[testenv] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    }
    process.exit(1);
  },
);
