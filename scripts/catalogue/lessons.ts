/**
 * Reads the course pages' frontmatter (concept ids, lab links), for the coverage
 * tests and anything else that needs to know what the lessons teach.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { CONCEPTS, isConceptId, type ConceptId } from './concepts.ts';
import { projectRoot } from '../base/paths.ts';

// From the project root, not this file: the compiled CLI (dist-cli/) runs this code too.
export const DOCS_DIR = join(projectRoot, 'site', 'content', 'docs');
export const LESSONS_PREFIX = 'lessons/';
const FRONTMATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n/;

export interface DocPage {
  /** Path under site/content/docs, with forward slashes, for example `lessons/ipvs.mdx`. */
  readonly file: string;
  readonly frontmatter: Record<string, unknown>;
  /** Everything after the frontmatter block. */
  readonly body: string;
}

function mdxFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return mdxFiles(full);
    return entry.name.endsWith('.mdx') ? [full] : [];
  });
}

/** Every `.mdx` page under site/content/docs with its parsed frontmatter. */
export function readDocPages(): DocPage[] {
  return mdxFiles(DOCS_DIR)
    .sort()
    .map((full) => {
      const file = relative(DOCS_DIR, full).split('\\').join('/');
      const text = readFileSync(full, 'utf8');
      const match = FRONTMATTER.exec(text);
      if (!match) throw new Error(`${file}: no frontmatter block (--- … ---) at the top`);
      const data: unknown = parseYaml(match[1] ?? '');
      if (typeof data !== 'object' || data === null || Array.isArray(data)) {
        throw new Error(`${file}: frontmatter is not a YAML mapping`);
      }
      return { file, frontmatter: data as Record<string, unknown>, body: text.slice(match[0].length) };
    });
}

function stringList(page: DocPage, key: string): string[] {
  const value = page.frontmatter[key];
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    throw new Error(`${page.file}: frontmatter \`${key}\` must be a list of strings`);
  }
  return value;
}

/** The concept ids a page's frontmatter names (unknown ids included, so tests can report them). */
export function pageConcepts(page: DocPage): string[] {
  return stringList(page, 'concepts');
}

/** The lab ids a page's frontmatter names. */
export function pageLabs(page: DocPage): string[] {
  return stringList(page, 'labs');
}

/**
 * For every concept, the pages (paths under site/content/docs) that teach it.
 * Concepts no page teaches are present with an empty list.
 */
export function lessonConcepts(pages: readonly DocPage[] = readDocPages()): Map<ConceptId, string[]> {
  const taught = new Map<ConceptId, string[]>(CONCEPTS.map((c) => [c.id, []]));
  for (const page of pages) {
    for (const id of pageConcepts(page)) {
      if (isConceptId(id)) taught.get(id)!.push(page.file);
    }
  }
  return taught;
}
