/**
 * The known labs: every module listed in labs/index.ts, validated once with the lab schema.
 * Ids that arrive from the browser or the command line are looked up here and nowhere else,
 * so they are never used to build a path or a command.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { isMode, MODES, type Mode } from '../catalogue/modes.ts';
import { labsDir } from '../base/paths.ts';
import { unknownId } from '../base/errors.ts';
import { LAB_MODULES } from '../../labs/index.ts';
import { fromZodError, labDataError } from './friendly-error.ts';
import { labSchema, type Lab, type Step } from './schema.ts';

export interface LabModule {
  /** The folder under labs/ (the id must equal it). */
  folder: string;
  /** The default export of labs/<folder>/lab.ts, not yet validated. */
  definition: unknown;
}

function labFileName(folder: string): string {
  return `labs/${folder}/lab.ts`;
}

/** Files shared by several labs live in labs/_shared/ and are named `@shared/<path>` in a setup. */
const SHARED_PREFIX = '@shared/';

/** Where a setup file of a lab is on disk. */
export function labFilePath(folder: string, rel: string, root = labsDir): string {
  return rel.startsWith(SHARED_PREFIX) ? join(root, '_shared', rel.slice(SHARED_PREFIX.length)) : join(root, folder, rel);
}

/** Validate one lab module: the schema, then what the schema cannot see (folder, files, concepts). */
export function validateLab(mod: LabModule, root = labsDir): Lab {
  const file = labFileName(mod.folder);
  const parsed = labSchema().safeParse(mod.definition);
  if (!parsed.success) throw fromZodError(file, parsed.error);
  const lab = parsed.data;
  const issues: { path: (string | number)[]; message: string }[] = [];
  if (lab.id !== mod.folder) issues.push({ path: ['id'], message: `must equal the folder name "${mod.folder}"` });
  for (const key of ['manifests', 'workspace'] as const) {
    lab.setup[key].forEach((rel, i) => {
      if (!existsSync(labFilePath(mod.folder, rel, root)))
        issues.push({
          path: ['setup', key, i],
          message: `file ${rel} does not exist in labs/${rel.startsWith(SHARED_PREFIX) ? '_shared' : mod.folder}/`,
        });
    });
  }
  lab.steps.forEach((step, i) =>
    step.concepts.forEach((c, j) => {
      if (!lab.concepts.includes(c))
        issues.push({ path: ['steps', i, 'concepts', j], message: `${c} is not among the lab's concepts (${lab.concepts.join(', ')})` });
    }),
  );
  if (issues.length) throw labDataError(file, issues);
  return lab;
}

let cache: Lab[] | undefined;

/** Every lab, validated; throws the first lab's friendly error when one is broken. */
export function loadLabs(modules: readonly LabModule[] = LAB_MODULES): Lab[] {
  if (modules !== LAB_MODULES) return modules.map((m) => validateLab(m));
  cache ??= modules.map((m) => validateLab(m));
  return cache;
}

function labIds(): string[] {
  return loadLabs().map((l) => l.id);
}

/** The lab with this id, or a 404 DplabError naming the known ids. */
export function requireLab(id: string): Lab {
  const lab = loadLabs().find((l) => l.id === id);
  if (!lab) throw unknownId('lab', id, labIds());
  return lab;
}

export function requireStep(lab: Lab, id: string): Step {
  const step = lab.steps.find((s) => s.id === id);
  if (!step)
    throw unknownId(
      `step of lab ${lab.id}`,
      id,
      lab.steps.map((s) => s.id),
    );
  return step;
}

/** The mode asked for (must be one the lab runs on), or the lab's default when none was given. */
export function requireMode(lab: Lab, mode: unknown): Mode {
  if (mode === undefined || mode === null || mode === '') return lab.modes[0];
  if (typeof mode !== 'string' || !isMode(mode) || !lab.modes.includes(mode)) {
    throw unknownId(`mode for lab ${lab.id}`, String(mode), lab.modes.length ? lab.modes : MODES);
  }
  return mode;
}
