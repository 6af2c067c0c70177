/**
 * `npm start` on a fresh clone: the server answers at once while the course builds. Every page
 * is the build page (progress from Astro's real output, then the course), the status is JSON,
 * the page's script is allowed by its hash and nothing else, foreign Host names are refused as
 * for any page, and once the build is done the course itself is served.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from './http.ts';
import { BuildProgress } from '../base/site-build.ts';
import { BUILD_STATUS_PATH } from './build-page.ts';
import { inlineScriptHashes } from './page-policy.ts';
import { DplabError } from '../base/errors.ts';
import { projectRoot } from '../base/paths.ts';
import { http as httpTo } from '../../test/fixtures/terminal-client.ts';

/** A real `astro build` of this course, as the runner captured it. */
const ASTRO_LOG = readFileSync(join(projectRoot, 'test', 'fixtures', 'astro-build.txt'), 'utf8');

describe('build progress from Astro output', () => {
  it('follows the steps and counts the pages, however the output is chunked', () => {
    const p = new BuildProgress();
    expect(p.status()).toMatchObject({ state: 'building', step: 'Starting the build', pages: 0 });
    const upTo = (marker: string) => ASTRO_LOG.slice(0, ASTRO_LOG.indexOf(marker));
    const at = upTo('building client (vite)');
    for (let i = 0; i < at.length; i += 37) p.onOutput(at.slice(i, i + 37));
    expect(p.status().step).toBe('Compiling the pages');
    p.onOutput(ASTRO_LOG.slice(at.length, ASTRO_LOG.indexOf('/lessons/cilium/')));
    expect(p.status()).toMatchObject({ step: 'Writing the pages', pages: 3 });
    p.onOutput(ASTRO_LOG.slice(ASTRO_LOG.indexOf('/lessons/cilium/')));
    expect(p.status().step).toBe('Indexing the course for search');
    // Astro's own count: "26 page(s) built".
    expect(p.status().pages).toBe(Number(/(\d+) page\(s\) built/.exec(ASTRO_LOG)![1]));
    p.done();
    expect(p.finished).toBe(true);
    expect(p.status().state).toBe('done');
  });

  it('a failure carries the message, the fix and the log tail', () => {
    const p = new BuildProgress();
    p.failed(new DplabError('Building the course failed (exit code 1).', { fix: 'Read the log.', details: 'last lines' }));
    expect(p.finished).toBe(false);
    expect(p.status()).toMatchObject({ state: 'failed', failure: { message: /failed/, fix: 'Read the log.', tail: 'last lines' } });
  });
});

describe('serving while the course builds', () => {
  const progress = new BuildProgress();
  let server: RunningServer;
  let origin: string;
  const http = (path: string, headers: Record<string, string> = {}) => httpTo(origin, path, { headers });

  beforeAll(async () => {
    process.env.DPLAB_STATE_DIR = mkdtempSync(join(tmpdir(), 'dplab-state-'));
    const site = mkdtempSync(join(tmpdir(), 'dplab-site-'));
    writeFileSync(join(site, 'index.html'), '<h1>the course</h1>');
    server = await startServer({ port: 0, portExplicit: true, token: 'build-page-token-0123456789', siteDir: site, building: progress });
    origin = `http://127.0.0.1:${server.port}`;
  });
  afterAll(async () => {
    await server.close();
  });

  it('answers every page with the build page, whose one script is allowed by its hash', async () => {
    progress.onOutput(ASTRO_LOG.slice(0, ASTRO_LOG.indexOf('building client')));
    for (const path of ['/', '/lessons/services/', '/labs/first-service/']) {
      const r = await http(path);
      expect(r.status, path).toBe(503);
      expect(r.headers['cache-control']).toBe('no-store');
      expect(r.body).toContain('Building the course');
      expect(r.body).toContain('Compiling the pages');
      const csp = String(r.headers['content-security-policy']);
      const hashes = inlineScriptHashes(r.body);
      expect(hashes).toHaveLength(1);
      expect(csp).toContain(hashes[0]);
      expect(csp).toMatch(/script-src 'self' 'wasm-unsafe-eval' 'sha256-/);
    }
  });

  it('reports the status as JSON for the page to follow', async () => {
    const r = await http(BUILD_STATUS_PATH);
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toMatchObject({ state: 'building', step: 'Compiling the pages', pages: 0 });
  });

  it('refuses a foreign Host name, as for every page', async () => {
    const r = await http('/', { host: 'evil.example:80' });
    expect(r.status).toBe(403);
    expect(r.body).not.toContain('Building the course');
  });

  it('the API answers meanwhile', async () => {
    expect((await http('/api/health')).status).toBe(200);
  });

  it('serves the course once the build is done', async () => {
    progress.done();
    const r = await http('/');
    expect(r.status).toBe(200);
    expect(r.body).toContain('the course');
    // The status is gone with the build page; the page takes any answer but a status as "reload".
    expect((await http(BUILD_STATUS_PATH)).status).toBe(404);
  });
});
