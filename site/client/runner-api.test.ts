// api() validates what the runner answers: a good answer comes back typed, one of another
// shape is refused with the field that differs, an error body keeps its fix.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clusterStatusSchema } from '../../scripts/wire/clusters.ts';
import { api, RunnerUnavailable, UnexpectedAnswer } from './runner-api.ts';

function answer(status: number, body: unknown): void {
  // The page's origin and its stored token, as runner-auth.ts reads them in a browser.
  vi.stubGlobal('location', new URL('http://127.0.0.1:4321/labs/first-service/'));
  const store = new Map([['dplab.token', 'a'.repeat(32)]]);
  vi.stubGlobal('localStorage', {
    getItem: (k: string) => store.get(k) ?? null,
    setItem: (k: string, v: string) => store.set(k, v),
    removeItem: (k: string) => store.delete(k),
  });
  vi.stubGlobal('fetch', async () => new Response(typeof body === 'string' ? body : JSON.stringify(body), { status }));
}

const status = {
  mode: 'iptables',
  name: 'dplab-iptables',
  state: 'absent',
  nodes: 0,
  readyNodes: 0,
  proxyMode: 'iptables',
  kubeconfig: '/k',
};

describe('api()', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('returns a matching answer', async () => {
    answer(200, status);
    expect(await api('/api/clusters/iptables', clusterStatusSchema)).toEqual(status);
  });

  it('refuses an answer of another shape, naming the field', async () => {
    answer(200, { ...status, nodes: '0' });
    const err = await api('/api/clusters/iptables', clusterStatusSchema).catch((e) => e);
    expect(err).toBeInstanceOf(UnexpectedAnswer);
    expect(err.message).toContain('GET /api/clusters/iptables');
    expect(err.message).toContain('(nodes: Expected number)');
  });

  it('turns an error body into an error with its fix', async () => {
    answer(409, { error: { message: 'Not running.', fix: 'dplab up iptables' } });
    const err = await api('/api/clusters/iptables', clusterStatusSchema).catch((e) => e);
    expect(err).toMatchObject({ message: 'Not running.', fix: 'dplab up iptables', status: 409 });
  });

  it('says offline when a static host answers with HTML', async () => {
    answer(200, '<!doctype html>');
    await expect(api('/api/session', clusterStatusSchema)).rejects.toBeInstanceOf(RunnerUnavailable);
  });
});
