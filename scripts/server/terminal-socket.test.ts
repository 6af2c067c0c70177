/**
 * The lab terminal socket: the cluster notice arrives before the shell's first output (so it
 * never lands inside what the learner types), and node shells accept only node names the
 * mode's cluster lists (attacks on the `node` parameter are refused before any command runs).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startServer, type RunningServer } from './http.ts';
import { installDoubles } from '../../test/fixtures/doubles.ts';
import type { Mode } from '../wire/modes.ts';

const TOKEN = 'terminal-socket-test-token';
const NOTICE_DELAY_MS = 400;
let server: RunningServer;
let site: string;
/** The terminals waiting for their cluster to be ready, as the runner's status events would call them. */
const waitingForReady = new Map<Mode, Set<() => void>>();

beforeAll(async () => {
  site = mkdtempSync(join(tmpdir(), 'dplab-site-'));
  server = await startServer({
    port: 0,
    portExplicit: true,
    token: TOKEN,
    siteDir: site,
    terminalNotice: (mode: Mode) => new Promise((ok) => setTimeout(() => ok(`The ${mode} cluster is not running.`), NOTICE_DELAY_MS)),
    terminalReady: (mode, then) => {
      const set = waitingForReady.get(mode) ?? new Set();
      waitingForReady.set(mode, set.add(then));
      return () => set.delete(then);
    },
  });
});
afterAll(async () => {
  await server.close();
  rmSync(site, { recursive: true, force: true });
});

function open(
  query: string,
): Promise<{ frames: Array<{ binary: boolean; text: string }>; ws: WebSocket } | { refused: number; body: string }> {
  return new Promise((resolve, reject) => {
    const origin = `http://127.0.0.1:${server.port}`;
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/api/terminal?${query}`, {
      headers: { authorization: `Bearer ${TOKEN}`, origin },
    });
    const frames: Array<{ binary: boolean; text: string }> = [];
    ws.on('message', (data, binary) => frames.push({ binary, text: data.toString() }));
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ refused: res.statusCode ?? 0, body }));
    });
    ws.on('error', reject);
    ws.on('open', () => resolve({ frames, ws }));
  });
}

describe('lab terminal socket', { timeout: 20_000 }, () => {
  it('sends the cluster notice before the first output, even when the notice is slow', async () => {
    const r = await open('cols=80&rows=24&mode=iptables');
    if ('refused' in r) throw new Error(`refused ${r.refused}`);
    await expect.poll(() => r.frames.some((f) => f.binary), { timeout: 10_000 }).toBe(true);
    const firstOutput = r.frames.findIndex((f) => f.binary);
    const notice = r.frames.findIndex((f) => !f.binary && JSON.parse(f.text).type === 'notice');
    expect(notice).toBeGreaterThanOrEqual(0);
    expect(notice).toBeLessThan(firstOutput);
    expect(JSON.parse(r.frames[notice].text).message).toBe('The iptables cluster is not running.');
    r.ws.close();
  });

  it('once the cluster is ready, says so below the prompt and redraws the prompt with what the learner had typed', async () => {
    const r = await open('cols=80&rows=24&mode=nftables');
    if ('refused' in r) throw new Error(`refused ${r.refused}`);
    const output = () =>
      r.frames
        .filter((f) => f.binary)
        .map((f) => f.text)
        .join('');
    await expect.poll(() => waitingForReady.get('nftables')?.size ?? 0, { timeout: 10_000 }).toBe(1);
    await expect.poll(output, { timeout: 10_000 }).toMatch(/#\s*$/);
    r.ws.send(JSON.stringify({ type: 'input', data: 'echo half-typed' }));
    await expect.poll(output, { timeout: 10_000 }).toContain('echo half-typed');
    const before = r.frames.length;
    for (const then of [...(waitingForReady.get('nftables') ?? [])]) then();
    const notices = () => r.frames.slice(before).filter((f) => !f.binary && JSON.parse(f.text).type === 'notice');
    await expect.poll(() => notices().length, { timeout: 10_000 }).toBe(1);
    expect(JSON.parse(notices()[0].text).message).toBe('\r\nThe nftables cluster is ready: kubectl in this shell reaches it now.');
    // After the notice, the shell draws its prompt and the half-typed line again (nothing ran).
    const after = () =>
      r.frames
        .slice(r.frames.indexOf(notices()[0]) + 1)
        .filter((f) => f.binary)
        .map((f) => f.text)
        .join('');
    await expect.poll(after, { timeout: 10_000 }).toMatch(/#\s*echo half-typed/);
    expect(after()).not.toContain('\nhalf-typed');
    // Once: it stopped waiting, and a second ready event says nothing more.
    expect(waitingForReady.get('nftables')?.size).toBe(0);
    r.ws.close();
  });

  it.each([
    ['a node without a mode', 'node=dplab-iptables-worker', 400],
    ['a path as the node', 'mode=iptables&node=../../bin/sh', 400],
    ['an argv as the node', 'mode=iptables&node=x%20--privileged', 400],
  ])('refuses %s', async (_name, query, status) => {
    const r = await open(`cols=80&rows=24&${query}`);
    expect('refused' in r && r.refused).toBe(status);
  });

  it('refuses a node the cluster does not list, and runs none of the client’s text', async () => {
    const doubles = installDoubles({
      rules: [
        { tool: 'kind', match: '^get nodes --name dplab-iptables$', stdout: 'dplab-iptables-control-plane\ndplab-iptables-worker\n' },
      ],
    });
    const r = await open('cols=80&rows=24&mode=iptables&node=dplab-cilium-worker');
    expect('refused' in r && r.refused).toBe(404);
    expect('refused' in r && r.body).toContain('is not a node of the iptables cluster');
    expect(doubles.commandLines()).toEqual(['kind get nodes --name dplab-iptables']);
  });
});
