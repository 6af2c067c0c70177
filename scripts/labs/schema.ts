/**
 * What a lab is, as zod schemas: small factories with a doc comment per field (in the style of
 * Starlight's schemas). Lab modules (`labs/<id>/lab.ts`) export a definition; the loader
 * validates it with `labSchema()` and reports problems through friendly-error.ts.
 * Checks are code (gather/evaluate functions); everything else is data.
 */
import { z } from 'zod';
import { MODES, type Mode } from '../catalogue/modes.ts';
import { isConceptId, type ConceptId } from '../catalogue/concepts.ts';
import type { Check } from './checks/types.ts';
import { readableCommand } from './command-lines.ts';
import type { ClusterHandle } from '../clusters/handle.ts';

/** Lab and step ids: lowercase words joined by hyphens, safe in URLs and file names. */
const ID_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;
/** A Kubernetes namespace name (DNS label), starting with `lab-` so labs never touch anything else. */
const NAMESPACE_PATTERN = /^lab-[a-z0-9]([-a-z0-9]{0,55}[a-z0-9])?$/;

const idSchema = () => z.string().regex(ID_PATTERN, 'must be lowercase words joined by hyphens (e.g. `first-service`)');

const modeSchema = () => z.enum(MODES, { errorMap: () => ({ message: `must be one of ${MODES.join(', ')}` }) });

const conceptSchema = () =>
  z.string().refine((v): v is ConceptId => isConceptId(v), {
    message: 'is not a concept id from scripts/catalogue/concepts.ts (e.g. S2)',
  }) as unknown as z.ZodType<ConceptId>;

/** A file inside the lab folder: relative, forward slashes, never climbing out. */
const labFileSchema = () =>
  z
    .string()
    .min(1)
    .refine((p) => !p.startsWith('/') && !p.split('/').includes('..') && !p.includes('\\'), {
      message: 'must be a path inside the lab folder (relative, no `..`)',
    });

const nonEmptyText = () => z.string().trim().min(1, 'must not be empty');
/** A command a learner reads: broken into lines where it is too long to take in (command-lines.ts). */
const commandText = () => nonEmptyText().transform((c) => readableCommand(c));

function uniqueBy<T>(key: (item: T) => string, what: string) {
  return (items: T[], ctx: z.RefinementCtx) => {
    const seen = new Set<string>();
    items.forEach((item, i) => {
      const k = key(item);
      if (seen.has(k)) ctx.addIssue({ code: z.ZodIssueCode.custom, path: [i], message: `duplicate ${what} "${k}"` });
      seen.add(k);
    });
  };
}

const snippetSchema = () =>
  z
    .object({
      /** A few words shown above the command ("List the EndpointSlices"). */
      label: z.string().optional(),
      /** Shell text typed into the learner's terminal when clicked (shown and typed broken into readable lines). */
      command: commandText(),
      /** Only show the snippet on these modes (default: every mode of the lab). */
      modes: z.array(modeSchema()).min(1).optional(),
    })
    .strict();

const solutionSchema = () =>
  z
    .object({
      /**
       * What a learner would type, one shell command per entry, run in order by `bash` with
       * `set -e` in the lab workspace (KUBECONFIG, DPLAB_MODE and DPLAB_CLUSTER set as in the terminal).
       */
      commands: z.array(commandText()).min(1, 'must have at least 1 item'),
      /** Replaces `commands` on the modes named here, where the machinery differs (Cilium has no kube-proxy). */
      byMode: z.record(modeSchema(), z.array(commandText()).min(1, 'must have at least 1 item')).optional(),
      /** Markdown shown under "Show solution": why these commands work. */
      explanation: z.string().optional(),
    })
    .strict();

const checkSchema = () =>
  z.custom<Check<unknown>>(
    (v) =>
      typeof v === 'object' &&
      v !== null &&
      (v as Check).observations instanceof z.ZodType &&
      typeof (v as Check).gather === 'function' &&
      typeof (v as Check).evaluate === 'function',
    { message: 'must be a check: an object with an observations schema, gather(ctx) and evaluate(observations, ctx) functions' },
  );

/** What a restorer gets: the lab cluster's handle, the mode, and the reset's abort signal. */
interface RestoreContext {
  cluster: ClusterHandle;
  mode: Mode;
  signal?: AbortSignal;
}

/** One cluster-wide change a lab undoes on reset: `run` returns what it put back, or null when nothing needed it. */
export interface Restorer {
  what: string;
  run(ctx: RestoreContext): Promise<string | null>;
}

const restoreSchema = () =>
  z.custom<Restorer>(
    (v) => typeof v === 'object' && v !== null && typeof (v as Restorer).what === 'string' && typeof (v as Restorer).run === 'function',
    {
      message: 'must be a restorer: an object with `what` (text) and run(ctx)',
    },
  );

const stepSchema = () =>
  z
    .object({
      /** Stable id, used in URLs, progress and observation file names. */
      id: idSchema(),
      /** Short imperative title ("Expose web as a ClusterIP Service"). */
      title: nonEmptyText(),
      /** Markdown shown to the learner; rendered to HTML when the site is built. */
      instructions: nonEmptyText(),
      /** Concept ids this step practises (a subset of the lab's concepts). */
      concepts: z.array(conceptSchema()).default([]),
      /** Click-to-run commands, in the order the instructions use them. */
      snippets: z.array(snippetSchema()).default([]),
      /** Revealed one at a time, from a nudge to nearly the answer. */
      hints: z.array(nonEmptyText()).min(1, 'must have at least 1 item'),
      /** What "Apply solution" runs and "Show solution" shows. */
      solution: solutionSchema(),
      /** How the runner decides the step is done, against the live cluster. */
      check: checkSchema(),
    })
    .strict();

const setupSchema = () =>
  z
    .object({
      /** Manifests applied into the lab namespace on setup and reset (paths relative to the lab folder). */
      manifests: z.array(labFileSchema()).default([]),
      /** Files copied into the learner's workspace as `<lab id>/<file name>`, for steps to `kubectl apply`. */
      workspace: z.array(labFileSchema()).default([]),
      /**
       * Cluster-wide changes the lab's steps make outside its namespace (a package installed in a
       * node, kube-proxy's configuration), undone on every setup and reset so a step cannot pass
       * before the learner has done it again. Each one checks first and changes only what it finds.
       */
      restore: z.array(restoreSchema()).default([]),
      /** Container images the lab pulls, pinned by tag; for preloading in classrooms without a good network. */
      images: z
        .array(
          z
            .string()
            .regex(
              /^[\w.\-/]+(:[\w.-]+)?(@sha256:[a-f0-9]{64})?$/,
              'must be an image reference such as `registry.k8s.io/e2e-test-images/agnhost:2.53`',
            ),
        )
        .default([]),
    })
    .strict();

export const labSchema = () =>
  z
    .object({
      /** Must equal the folder name under labs/. */
      id: idSchema(),
      title: nonEmptyText(),
      /** One or two sentences for lists and the sidebar. */
      summary: nonEmptyText(),
      /** The dataplane modes this lab runs on; the first is the default. */
      modes: z
        .array(modeSchema())
        .min(1, 'must have at least 1 item')
        .superRefine(uniqueBy((m) => m, 'mode')),
      /** Estimated minutes for a learner. */
      minutes: z.number().int().positive(),
      /** Concept ids from the syllabus this lab practises. */
      concepts: z.array(conceptSchema()).min(1, 'must have at least 1 item'),
      /** The lab's own namespace; reset deletes and recreates it. */
      namespace: z.string().regex(NAMESPACE_PATTERN, 'must be a namespace name starting with `lab-`'),
      setup: setupSchema(),
      steps: z
        .array(stepSchema())
        .min(1, 'must have at least 1 item')
        .superRefine(uniqueBy((s: { id: string }) => s.id, 'step id')),
    })
    .strict();

export type Lab = z.output<ReturnType<typeof labSchema>>;
export type Step = z.output<ReturnType<typeof stepSchema>>;
export type Snippet = z.output<ReturnType<typeof snippetSchema>>;
/** What an author writes in lab.ts (defaults may be left out). */
export type LabDefinition = z.input<ReturnType<typeof labSchema>>;

/** Identity function that gives lab.ts authors type checking and completion. */
export function defineLab(lab: LabDefinition): LabDefinition {
  return lab;
}

/** The solution commands for a mode. */
export function solutionFor(step: Step, mode: Mode): string[] {
  return step.solution.byMode?.[mode] ?? step.solution.commands;
}
