/**
 * Observation files: what a check's gather saw, stored next to the lab so `npm test` can replay
 * evaluate without a cluster. `labs/<id>/observations/<step>.<unsolved|solved>[.<mode>].json`;
 * a mode-specific file wins over the shared one.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { Mode } from '../catalogue/modes.ts';
import { PROVIDERS, type ProviderId } from '../catalogue/provider-ids.ts';
import { labsDir } from '../base/paths.ts';
import { DplabError } from '../base/errors.ts';
import type { ObservationSchema } from './checks/types.ts';
import { fromZodError, labDataError } from './friendly-error.ts';

export const STATES = ['unsolved', 'solved'] as const;
export type StepState = (typeof STATES)[number];

const observationSourceSchema = () =>
  z
    .discriminatedUnion('kind', [
      z.object({
        kind: z.literal('hand-written'),
        /** The documented output format or doc URL the file was written from. */
        from: z.string().min(1),
      }),
      z.object({
        kind: z.literal('recorded'),
        /** The cluster provider it was recorded on: kind (Docker) or sim (real components on netns nodes). */
        provider: z.enum(['kind', 'sim']).default('kind'),
        /** `kind version` of the machine that recorded it (kind provider). */
        kindVersion: z.string().optional(),
        /** The cluster's server version (`kubectl version -o json`). */
        kubernetesVersion: z.string(),
        /** Every component and its version (sim provider: kube-apiserver, kube-proxy, etcd, CoreDNS, agnhost, …). */
        components: z.record(z.string(), z.string()).optional(),
        /** ISO date of the recording. */
        date: z.string(),
      }),
    ])
    .superRefine((s, ctx) => {
      if (s.kind === 'recorded' && (s.provider === 'kind' ? !s.kindVersion : !s.components)) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'a kind recording names its kindVersion, a sim recording its components' });
      }
    });

const observationFileSchema = () =>
  z.object({
    source: observationSourceSchema(),
    /** What evaluate must say about these observations; required for unsolved files. */
    expect: z.object({ status: z.enum(['pass', 'fail']), message: z.string().min(1) }).optional(),
    /** What gather returned, as JSON. */
    observations: z.unknown(),
  });

export type ObservationFile = z.output<ReturnType<typeof observationFileSchema>>;

function observationsDir(labId: string): string {
  return join(labsDir, labId, 'observations');
}

/**
 * `<step>.<state>[.<mode>][.<provider>].json`: a recording names the provider it was made on
 * (`first-service/observations/expose-web.solved.iptables.kind.json`), so recordings of one step on
 * kind and on the sim provider sit side by side; a hand-written file names none.
 */
export function observationFileName(step: string, state: StepState, mode?: Mode, provider?: ProviderId): string {
  return `${step}.${state}${mode ? `.${mode}` : ''}${provider ? `.${provider}` : ''}.json`;
}

/**
 * Every file that applies to this step, state and mode: its recordings (kind first, then sim),
 * or, where none exists, the hand-written one (mode-specific first, then the shared one).
 */
export function findObservationFiles(labId: string, step: string, state: StepState, mode: Mode): string[] {
  const dir = observationsDir(labId);
  const recorded = PROVIDERS.map((p) => join(dir, observationFileName(step, state, mode, p))).filter((p) => existsSync(p));
  if (recorded.length) return recorded;
  const written = [observationFileName(step, state, mode), observationFileName(step, state)]
    .map((n) => join(dir, n))
    .find((p) => existsSync(p));
  return written ? [written] : [];
}

/** The one file to replay where one is enough (kind's recording first), or undefined. */
export function findObservationFile(labId: string, step: string, state: StepState, mode: Mode): string | undefined {
  return findObservationFiles(labId, step, state, mode)[0];
}

/**
 * Read one observation file. With the step's schema, its observations are checked too: a file
 * of another shape (recorded on another Kubernetes version, edited by hand) fails with the file
 * and the field, e.g. `labs/x/observations/y.solved.json: observations.services.items[0].spec.ports[0].port: Expected number, received string`.
 */
export function readObservationFile<O = unknown>(
  path: string,
  display = path,
  schema?: ObservationSchema<O>,
): ObservationFile & { observations: O } {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw fromZodError(display, {
      issues: [{ path: [], message: `is not valid JSON (${err instanceof Error ? err.message : err})` }],
    } as never);
  }
  const parsed = observationFileSchema().safeParse(raw);
  if (!parsed.success) throw fromZodError(display, parsed.error);
  if (!schema) return parsed.data as ObservationFile & { observations: O };
  const observations = schema.safeParse(parsed.data.observations);
  if (!observations.success)
    throw labDataError(
      display,
      observations.error.issues.map((i) => ({ ...i, path: ['observations', ...i.path] })),
    );
  return { ...parsed.data, observations: observations.data };
}

/** What a live gather returned, checked against the check's schema before evaluate reads it. */
export function checkedObservations<O>(schema: ObservationSchema<O>, value: unknown, what: string): O {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const e = labDataError(what, parsed.error.issues);
  throw new DplabError(`${what} read the cluster, but its observations have an unexpected shape: ${e.message}`, {
    details: e.details,
    fix: 'The cluster answers in a shape this version of the check does not know (another Kubernetes or Cilium version?). Please report it with the details.',
  });
}

export function writeObservationFile(labId: string, name: string, file: ObservationFile): string {
  const dir = observationsDir(labId);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`);
  return path;
}
