/**
 * connect-cost.sh and its reader: the script itself runs here (bash, a local TCP listener standing
 * in for the ClusterIP, a stand-in `iptables-save` printing a KUBE-SERVICES chain), its output is
 * read by parseConnectRun, and the median the script prints on the learner's side is the one
 * summarise() gives for the same samples.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labsDir } from '../../base/paths.ts';
import { connectFigures, onNodeArgs, parseConnectRun, summarise } from './connect-cost.ts';

const run = promisify(execFile);
const SCRIPT_PATH = join(labsDir, 'scale-compare', 'manifests', 'connect-cost.sh');
const script = readFileSync(SCRIPT_PATH, 'utf8');
const NS = 'lab-scale-compare';

let server: Server;
let port = 0;
const bin = mkdtempSync(join(tmpdir(), 'connect-cost-'));

/** A KUBE-SERVICES chain as kube-proxy v1.35.0 writes it: the lab's Services at positions 2 and 5 of 7. */
function kubeServices(p: number): string {
  const rule = (comment: string, ip: string, dport: number) =>
    `-A KUBE-SERVICES -d ${ip}/32 -p tcp -m comment --comment "${comment} cluster IP" -m tcp --dport ${dport} -j KUBE-SVC-X`;
  return [
    '*nat',
    ':KUBE-SERVICES - [0:0]',
    rule('kube-system/kube-dns:dns-tcp', '10.96.0.10', 53),
    rule(`${NS}/scale-7`, '127.0.0.1', p),
    rule('default/kubernetes:https', '10.96.0.1', 443),
    '-A KUBE-SVC-X -j KUBE-SEP-Y',
    rule('kube-system/kube-dns:metrics', '10.96.0.10', 9153),
    rule(`${NS}/scale-3`, '127.0.0.1', p),
    '-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-Z',
    '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS',
    'COMMIT',
  ].join('\n');
}

function stub(name: string, body: string): void {
  writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
  chmodSync(join(bin, name), 0o755);
}

const env = () => ({ ...process.env, PATH: `${bin}:${process.env.PATH}`, LC_ALL: 'C' });

async function onNode(which: 'first' | 'last', target: string, samples = 30): Promise<string> {
  const [, , ...args] = onNodeArgs(target === 'iptables' ? 'iptables' : 'nftables', {
    script,
    namespace: NS,
    target,
    samples,
    warmUp: 5,
    which,
  });
  const r = await run('bash', ['-c', ...args], { env: env() });
  return r.stdout;
}

beforeAll(async () => {
  server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
  writeFileSync(join(bin, 'chain'), kubeServices(port));
  stub('iptables-save', `cat "${join(bin, 'chain')}"`);
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('connect-cost.sh on a node', () => {
  it('iptables: times the lab Service whose KUBE-SERVICES rule comes last, and says how many rules were ahead', async () => {
    const out = parseConnectRun(await onNode('last', 'iptables'));
    expect(out).toMatchObject({ target: { name: `${NS}/scale-3`, ip: '127.0.0.1', port }, failed: 0 });
    // Position 5 of 7 KUBE-SERVICES rules (the KUBE-SVC line between them is another chain's).
    expect(out?.position).toEqual({ ahead: 4, total: 7, aheadAfter: 4 });
    expect(out?.samples).toHaveLength(30);
    for (const s of out!.samples) expect(s).toBeGreaterThan(0);
  });

  it('iptables --first: the one with the fewest rules ahead', async () => {
    const out = parseConnectRun(await onNode('first', 'iptables', 5));
    expect(out?.target.name).toBe(`${NS}/scale-7`);
    expect(out?.position).toEqual({ ahead: 1, total: 7, aheadAfter: 1 });
  });

  it('other modes: the target the caller read from the API server, no position', async () => {
    const out = parseConnectRun(await onNode('last', `${NS}/web 127.0.0.1 ${port}`, 5));
    expect(out).toMatchObject({ target: { name: `${NS}/web`, port }, failed: 0 });
    expect(out?.position).toBeUndefined();
  });

  it('a port nobody listens on: every connect fails and is counted, no sample', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const dead = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const out = parseConnectRun(await onNode('last', `${NS}/web 127.0.0.1 ${dead}`, 5));
    expect(out).toMatchObject({ failed: 10, samples: [] });
    expect(summarise(out!.samples)).toBeNull();
    expect(connectFigures(out)).toEqual({});
  });
});

describe("the learner's summary", () => {
  /** Captured on-node output, replayed through the script's own summary by a stand-in `docker`. */
  const CAPTURED = [
    `target ${NS}/scale-512 10.96.41.7 80`,
    'position 1003 1004',
    ...[180, 150, 990, 160, 170, 155, 400, 165, 175, 158].map((s) => `sample ${s}`),
    'position-after 1003 1004',
    'failed 0',
  ].join('\n');

  it('prints the same median and p90 as summarise(), with the rules ahead', async () => {
    writeFileSync(join(bin, 'captured'), `${CAPTURED}\n`);
    stub('docker', `cat "${join(bin, 'captured')}"`);
    stub('kubectl', 'echo unused');
    const e = { ...env(), DPLAB_CLUSTER: 'dplab-iptables', DPLAB_MODE: 'iptables' };
    const summary = (await run('bash', [SCRIPT_PATH], { env: e })).stdout;
    const parsed = parseConnectRun(CAPTURED)!;
    const s = summarise(parsed.samples)!;
    // Nearest rank over 10: the 5th and the 9th smallest.
    expect(s).toEqual({ samples: 10, medianUs: 165, p90Us: 400 });
    expect(summary).toContain(`median ${s.medianUs} µs, p90 ${s.p90Us} µs`);
    expect(summary).toContain('KUBE-SERVICES: 1002 rules ahead of its rule (of 1004) before timing, 1002 after.');
    expect(summary).toContain(`Timed 10 new TCP connections from dplab-iptables-worker to ${NS}/scale-512 (10.96.41.7:80)`);
    expect((await run('bash', [SCRIPT_PATH, '--median'], { env: e })).stdout.trim()).toBe(String(s.medianUs));
    expect(connectFigures(parsed)).toMatchObject({
      connectUs: { value: 165 },
      connectP90Us: { value: 400 },
      connectAhead: { value: 1002 },
    });
  });

  it('says so when kube-proxy rewrote the chain while it timed', async () => {
    writeFileSync(join(bin, 'captured'), `${CAPTURED.replace('position-after 1003', 'position-after 17')}\n`);
    const e = { ...env(), DPLAB_CLUSTER: 'dplab-iptables', DPLAB_MODE: 'iptables' };
    expect((await run('bash', [SCRIPT_PATH], { env: e })).stdout).toContain(
      'before timing, 16 after (kube-proxy rewrote the chain meanwhile',
    );
  });
});

describe('summarise', () => {
  it('takes the nearest rank, as the script does', () => {
    expect(summarise([5, 1, 4, 2, 3])).toEqual({ samples: 5, medianUs: 3, p90Us: 5 });
    expect(summarise(Array.from({ length: 400 }, (_, i) => 400 - i))).toEqual({ samples: 400, medianUs: 200, p90Us: 360 });
    expect(summarise([])).toBeNull();
  });

  it('reads nothing from output that names no target', () => {
    expect(parseConnectRun('error no ClusterIP rule\n')).toBeNull();
  });
});
