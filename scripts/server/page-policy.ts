/**
 * The headers every page of the course carries: a Content-Security-Policy that lets scripts
 * and connections reach this runner only and no page frame us, and X-Frame-Options for
 * browsers that predate frame-ancestors.
 *
 * Astro and Starlight inline a few small scripts (theme, sidebar state, search dialog), so a
 * page's policy lists the SHA-256 of each inline script it holds, computed from the file we
 * serve; nothing inline that we did not build runs. Styles may be inline (Starlight's style
 * attributes, xterm and mermaid set styles at run time); styles cannot run code.
 * 'wasm-unsafe-eval' lets Pagefind (the site search) compile its WebAssembly, nothing else.
 */
import { createHash } from 'node:crypto';

const BASE = {
  'default-src': ["'self'"],
  'script-src': ["'self'", "'wasm-unsafe-eval'"],
  'style-src': ["'self'", "'unsafe-inline'"],
  'img-src': ["'self'", 'data:'],
  'font-src': ["'self'", 'data:'],
  // 'self' covers ws:// to our own host and port in CSP Level 3 browsers.
  'connect-src': ["'self'"],
  // "Follow the instructor" frames the instructor's viewer page, on the instructor's runner.
  'frame-src': ["'self'", 'http:', 'https:'],
  'object-src': ["'none'"],
  'base-uri': ["'none'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
} as const;

/** Hashes of the inline (no src) script elements of an HTML document, as CSP sources. */
export function inlineScriptHashes(html: string): string[] {
  const out = new Set<string>();
  for (const m of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script\s*>/gi)) {
    const attrs = m[1];
    if (/\bsrc\s*=/i.test(attrs)) continue;
    // Data blocks (JSON, templates) never run; only classic and module scripts need a hash.
    const type = /\btype\s*=\s*["']?([^"'\s>]+)/i.exec(attrs)?.[1]?.toLowerCase();
    if (type && type !== 'module' && type !== 'text/javascript' && type !== 'application/javascript') continue;
    out.add(`'sha256-${createHash('sha256').update(m[2], 'utf8').digest('base64')}'`);
  }
  return [...out];
}

function contentSecurityPolicy(scriptHashes: readonly string[] = [], frameable = false): string {
  return Object.entries(BASE)
    .map(([directive, sources]) => {
      if (directive === 'frame-ancestors' && frameable) return `${directive} *`;
      return `${directive} ${[...sources, ...(directive === 'script-src' ? scriptHashes : [])].join(' ')}`;
    })
    .join('; ');
}

/**
 * Pages any site may frame: the viewer page only (`/watch/`), which is read-only (nothing to
 * click into doing something) and shows nothing without the viewer token in its fragment; a
 * learner's "Follow the instructor" tab frames it from the learner's own runner.
 */
export function frameablePath(pathname: string): boolean {
  return pathname === '/watch/' || pathname === '/watch/index.html';
}

/** Headers for any document or asset the runner serves. */
export function pageHeaders(scriptHashes: readonly string[] = [], frameable = false): Record<string, string> {
  return {
    'content-security-policy': contentSecurityPolicy(scriptHashes, frameable),
    ...(frameable ? {} : { 'x-frame-options': 'DENY' }),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };
}
