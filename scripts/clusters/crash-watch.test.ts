import { describe, expect, it } from 'vitest';
import { CommandError, type CommandResult, type RunOptions } from '../base/exec.ts';
import { crashingContainer, crashLine, watchForCrashes } from './crash-watch.ts';
import type { DplabError } from '../base/errors.ts';

/** kube-proxy's log in IPVS mode on this machine's kernel (no ip_vs), as `kubectl logs --previous` printed it. */
const IPVS_LOG = [
  'time="2026-12-07T22:13:57Z" level=error msg="Could not get ipvs family information from the kernel. It is possible that ipvs is not enabled in your kernel. Native loadbalancing will not work until this is fixed."',
  'I1207 22:13:57.113848       1 proxier.go:644] "Dummy VS not created" scheduler="rr"',
  'E1207 22:13:57.113883       1 server.go:134] "Error running ProxyServer" err="can\'t use the IPVS proxier: Ipvs not supported"',
  'E1207 22:13:57.113897       1 run.go:72] "command failed" err="can\'t use the IPVS proxier: Ipvs not supported"',
].join('\n');

const pods = (...containers: object[]) =>
  JSON.stringify({
    items: containers.map((c, i) => ({
      metadata: { name: `kube-proxy-${i}` },
      spec: { nodeName: `dplab-ipvs-worker${i ? i + 1 : ''}` },
      status: { containerStatuses: [{ name: 'kube-proxy', ...c }] },
    })),
  });

const result = (stdout: string): CommandResult => ({
  command: 'kubectl',
  file: 'kubectl',
  args: [],
  stdout,
  stderr: '',
  exitCode: 0,
  signal: undefined,
  durationMs: 1,
});

describe('crashingContainer', () => {
  it('finds a container in CrashLoopBackOff, or restarted twice and not ready; a starting one is not crashing', () => {
    expect(
      crashingContainer(
        pods({ ready: true, restartCount: 0 }, { ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } }),
      ),
    ).toBeUndefined();
    expect(crashingContainer(pods({ ready: true, restartCount: 5 }))).toBeUndefined();
    expect(
      crashingContainer(pods({ ready: true }, { ready: false, restartCount: 1, state: { waiting: { reason: 'CrashLoopBackOff' } } })),
    ).toEqual({
      pod: 'kube-proxy-1',
      container: 'kube-proxy',
      node: 'dplab-ipvs-worker2',
      restarts: 1,
    });
    expect(crashingContainer(pods({ ready: false, restartCount: 2, state: { terminated: { exitCode: 1 } } }))?.restarts).toBe(2);
    expect(crashingContainer('{"kind":"List"}')).toBeUndefined();
  });

  it('reads the line that says why from the log', () => {
    expect(crashLine(IPVS_LOG)).toBe(
      'E1207 22:13:57.113897       1 run.go:72] "command failed" err="can\'t use the IPVS proxier: Ipvs not supported"',
    );
    expect(crashLine('starting\nlistening on :10256\n')).toBe('listening on :10256');
    expect(crashLine('')).toBe('');
  });
});

describe('watchForCrashes', () => {
  it('throws at the first read that finds one, with the node, the restarts, the log line and the fix for it', async () => {
    const asked: string[] = [];
    const reads = [
      pods({ ready: false, restartCount: 0 }),
      pods({ ready: false, restartCount: 3, state: { waiting: { reason: 'CrashLoopBackOff' } } }),
    ];
    const kubectl = async (args: readonly string[], _o: RunOptions) => {
      asked.push(args.join(' '));
      return result(args.includes('logs') ? IPVS_LOG : (reads.shift() ?? ''));
    };
    const err = (await watchForCrashes(kubectl, {
      label: 'k8s-app=kube-proxy',
      what: 'kube-proxy',
      fixFor: (line) => (line.includes("can't use the IPVS proxier") ? 'Use another mode.' : undefined),
      intervalMs: 10,
      readMs: 1_000,
      signal: new AbortController().signal,
    }).catch((e: DplabError) => e)) as DplabError;
    expect(err.message).toBe(
      'kube-proxy on dplab-ipvs-worker keeps exiting (restarted 3 times): E1207 22:13:57.113897       1 run.go:72] "command failed" err="can\'t use the IPVS proxier: Ipvs not supported"',
    );
    expect(err.fix).toBe('Use another mode.');
    expect(asked).toEqual([
      '-n kube-system get pods -l k8s-app=kube-proxy -o json',
      '-n kube-system get pods -l k8s-app=kube-proxy -o json',
      '-n kube-system logs kube-proxy-0 -c kube-proxy --previous --tail=20',
    ]);
  });

  it('ends quietly when its wait is over, reads that fail are read again, and a fix it does not know is left to the caller', async () => {
    const stop = new AbortController();
    let n = 0;
    const kubectl = async () => {
      n++;
      if (n === 1) throw new CommandError('failed', { ...result(''), stderr: 'connection refused', exitCode: 1 }, 'refused');
      if (n === 3) stop.abort();
      return result(pods({ ready: true }));
    };
    await expect(
      watchForCrashes(kubectl, { label: 'x', what: 'x', intervalMs: 5, readMs: 100, signal: stop.signal }),
    ).resolves.toBeUndefined();
    expect(n).toBe(3);
    const err = (await watchForCrashes(
      async (a) => result(a.includes('logs') ? 'panic: boom\n' : pods({ ready: false, restartCount: 2 })),
      {
        label: 'x',
        what: 'the agent',
        fixFor: () => undefined,
        intervalMs: 5,
        readMs: 100,
        signal: new AbortController().signal,
      },
    ).catch((e: DplabError) => e)) as DplabError;
    expect(err.message).toBe('the agent on dplab-ipvs-worker keeps exiting (restarted 2 times): panic: boom');
    expect(err.fix).toBeUndefined();
  });
});
