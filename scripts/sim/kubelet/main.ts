/**
 * Entry point of the sim provider's kubelet stand-in, one per node:
 *   node --import tsx scripts/sim/kubelet/main.ts --config <file.json>
 *
 * Like a kubelet in a kind node container, it works inside its node's network namespace; unlike
 * a process `ip netns exec` starts, it stays in the mount namespace it was started from, so the
 * pod namespaces it adds under /run/netns are visible to everyone (and removable by the provider
 * after a crash). Started through `ip netns exec` (or outside the node), it re-runs itself
 * through nsenter into exactly that place.
 */
import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { loadKubeletConfig } from './config.ts';
import { startKubelet } from './kubelet.ts';

const REEXEC_ENV = 'DPLAB_SIM_KUBELET_IN_NODE';
const PARENT_CHECK_MS = 1_000;

async function sameNamespace(a: string, b: string): Promise<boolean> {
  const [x, y] = await Promise.all([stat(a), stat(b)]);
  return x.ino === y.ino && x.dev === y.dev;
}

async function main(argv: string[]): Promise<number> {
  const i = argv.indexOf('--config');
  if (i < 0 || !argv[i + 1]) {
    process.stderr.write('usage: main.ts --config <kubelet-config.json>\n');
    return 2;
  }
  const config = await loadKubeletConfig(argv[i + 1]);
  const nodeNs = `/run/netns/${config.netns}`;
  const inNode = await sameNamespace('/proc/self/ns/net', nodeNs).catch(() => null);
  if (inNode === null) throw new Error(`node network namespace ${config.netns} does not exist (${nodeNs})`);
  // `ip netns exec` gave us a mount namespace of our own (a slave copy): network namespaces
  // added there would be empty files to everyone else. The one we were started from is the
  // mount namespace of our parent (ip execs, so that is whoever ran `ip netns exec`).
  // (Once re-run, our parent is the first run, in the private namespace: nothing to compare.)
  const reran = !!process.env[REEXEC_ENV];
  if (reran && !inNode) throw new Error(`could not enter node namespace ${config.netns}`);
  const parentMounts = `/proc/${process.ppid}/ns/mnt`;
  const inParentMounts = reran || process.ppid <= 1 || (await sameNamespace('/proc/self/ns/mnt', parentMounts).catch(() => true));
  if (!inNode || !inParentMounts) {
    const child = spawn(
      'nsenter',
      [
        `--mount=${parentMounts}`,
        `--net=${nodeNs}`,
        `--wd=${process.cwd()}`,
        '--',
        process.execPath,
        ...process.execArgv,
        ...process.argv.slice(1),
      ],
      {
        stdio: 'inherit',
        env: { ...process.env, [REEXEC_ENV]: '1' },
      },
    );
    for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(sig, () => child.kill(sig));
    return new Promise((resolve) => child.on('exit', (code, sig) => resolve(code ?? (sig ? 1 : 0))));
  }

  const log = (msg: string) => process.stderr.write(`${new Date().toISOString()} kubelet[${config.nodeName}] ${msg}\n`);
  const kubelet = await startKubelet(config, log);
  log('running');
  return new Promise((resolve) => {
    // Re-run through nsenter, the process the provider tracks is our parent: if it is killed
    // outright (SIGKILL), clean up as for SIGTERM instead of living on as an orphan.
    const parent = process.ppid;
    if (process.env[REEXEC_ENV]) setInterval(() => process.ppid !== parent && stop('parent gone'), PARENT_CHECK_MS).unref();
    let stopping = false;
    const stop = (sig: string) => {
      if (stopping) return;
      stopping = true;
      log(`${sig}: stopping pods and cleaning up`);
      kubelet.stop().then(
        () => resolve(0),
        (err: unknown) => {
          log(`cleanup failed: ${(err as Error).message}`);
          resolve(1);
        },
      );
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`kubelet stand-in: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
