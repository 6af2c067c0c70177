/**
 * Serves the built site (dist/) for `dplab serve`. Paths are resolved inside the folder and
 * nothing outside it is ever read; every response carries the page policy (CSP, no framing).
 */
import { createReadStream, realpathSync, statSync, type Stats } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { frameablePath, inlineScriptHashes, pageHeaders } from './page-policy.ts';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.xml': 'application/xml',
  '.wasm': 'application/wasm',
  '.pf_meta': 'application/octet-stream',
  '.pf_fragment': 'application/octet-stream',
  '.pf_index': 'application/octet-stream',
};

/** A regular file whose real path (symlinks resolved) lies inside the real root, or null. */
function regularFileInside(realRoot: string, path: string): string | null {
  try {
    const real = realpathSync(path);
    if (real !== realRoot && !real.startsWith(realRoot + sep)) return null;
    return statSync(real).isFile() ? real : null;
  } catch {
    return null;
  }
}

/**
 * Map a URL path to a file in `root` (`/x/` → `/x/index.html`, `/x` → `/x/index.html` or `/x.html`).
 * Only regular files inside the build folder: no path out, no symlink out, no dotfile
 * (`/.dplab-build`, `/.git/…`: any segment that starts with a dot).
 */
export function resolveStatic(root: string, pathname: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  if (decoded.split(/[/\\]/).some((segment) => segment.startsWith('.'))) return null;
  let realRoot: string;
  try {
    realRoot = realpathSync(resolve(root));
  } catch {
    return null;
  }
  const target = resolve(realRoot, `.${decoded}`);
  if (target !== realRoot && !target.startsWith(realRoot + sep)) return null;
  const candidates = decoded.endsWith('/') ? [join(target, 'index.html')] : [target, join(target, 'index.html'), `${target}.html`];
  for (const c of candidates) {
    const file = regularFileInside(realRoot, c);
    if (file) return file;
  }
  return null;
}

interface PageEntry {
  mtimeMs: number;
  size: number;
  body: Buffer;
  hashes: string[];
}

/** `<script src>` tags put before `</head>` (the workshop portal adds its learner banner this way). */
function withHeadScripts(html: Buffer, scripts: readonly string[]): Buffer {
  if (!scripts.length) return html;
  const text = html.toString('utf8');
  const at = text.search(/<\/head\s*>/i);
  if (at < 0) return html;
  const tags = scripts.map((src) => `<script src="${src.replace(/[^A-Za-z0-9/._-]/g, '')}" defer></script>`).join('');
  return Buffer.from(text.slice(0, at) + tags + text.slice(at), 'utf8');
}

export interface StaticOptions {
  /** Same-origin script paths every HTML page loads (no inline code: the CSP stays hash-only). */
  headScripts?: readonly string[];
}

export function createStaticHandler(root: string, opts: StaticOptions = {}) {
  // Inline-script hashes per page, read once per version of the file.
  const pageCache = new Map<string, PageEntry>();
  async function readPage(file: string, st: Stats): Promise<{ body: Buffer; hashes: string[] }> {
    const hit = pageCache.get(file);
    if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return hit;
    const body = withHeadScripts(await readFile(file), opts.headScripts ?? []);
    const entry = { mtimeMs: st.mtimeMs, size: st.size, body, hashes: inlineScriptHashes(body.toString('utf8')) };
    pageCache.set(file, entry);
    return entry;
  }
  return async function serveStatic(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8', ...pageHeaders() });
      res.end('Method not allowed\n');
      return;
    }
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    let file = resolveStatic(root, pathname);
    let status = 200;
    if (!file) {
      status = 404;
      file = resolveStatic(root, '/404.html');
      if (!file) {
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', ...pageHeaders() });
        res.end('Not found\n');
        return;
      }
    }
    let st: Stats;
    let page: { body: Buffer; hashes: string[] } | null = null;
    try {
      st = await stat(file);
      if (extname(file) === '.html') page = await readPage(file, st);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', ...pageHeaders() });
      res.end('Not found\n');
      return;
    }
    res.writeHead(status, {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
      'content-length': page ? page.body.length : st.size,
      // Hashed assets never change; pages do whenever the course is rebuilt.
      'cache-control': pathname.startsWith('/_astro/') ? 'public, max-age=31536000, immutable' : 'no-cache',
      ...pageHeaders(page?.hashes ?? [], status === 200 && frameablePath(pathname)),
    });
    if (method === 'HEAD') {
      res.end();
      return;
    }
    if (page) {
      res.end(page.body);
      return;
    }
    // pipeline destroys the file stream when the client goes away mid-download: no fd left open.
    pipeline(createReadStream(file), res).catch(() => undefined);
  };
}
