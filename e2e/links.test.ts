/**
 * The built course has no broken internal links: every root-relative href and src in every
 * page resolves to a file the runner would serve, and every #fragment names an id on its page.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { distDir } from '../scripts/base/paths.ts';
import { resolveStatic } from '../scripts/server/static.ts';

function htmlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return entry === '_astro' || entry === 'pagefind' ? [] : htmlFiles(path);
    return entry.endsWith('.html') ? [path] : [];
  });
}

function ids(html: string): Set<string> {
  return new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]));
}

describe('internal links of the built course', () => {
  const pages = htmlFiles(distDir);

  it('has the pages a learner starts from', () => {
    const names = pages.map((p) => relative(distDir, p));
    for (const must of [
      'index.html',
      'terminal/index.html',
      'clusters/index.html',
      'explorer/index.html',
      'labs/first-service/index.html',
      'lessons/services/index.html',
    ]) {
      expect(names).toContain(must);
    }
  });

  it('every root-relative link and asset resolves, and every #fragment exists', () => {
    const broken: string[] = [];
    const idCache = new Map<string, Set<string>>();
    const idsOf = (file: string) => {
      if (!idCache.has(file)) idCache.set(file, ids(readFileSync(file, 'utf8')));
      return idCache.get(file)!;
    };
    for (const page of pages) {
      const html = readFileSync(page, 'utf8');
      for (const m of html.matchAll(/\s(?:href|src)="(\/[^"]*)"/g)) {
        const url = new URL(m[1].replaceAll('&amp;', '&'), 'http://course.invalid');
        if (url.pathname.startsWith('/api/')) continue;
        const target = resolveStatic(distDir, url.pathname);
        if (!target) {
          broken.push(`${relative(distDir, page)} → ${m[1]}`);
          continue;
        }
        const fragment = decodeURIComponent(url.hash.slice(1));
        if (fragment && target.endsWith('.html') && !idsOf(target).has(fragment))
          broken.push(`${relative(distDir, page)} → ${m[1]} (no id "${fragment}")`);
      }
    }
    expect(broken).toEqual([]);
  });
});
