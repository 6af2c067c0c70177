/** The dataplane explorer's answers (GET /api/dataplane/…): one Service's frontends and backends. */
import { z } from './zod.ts';
import { FORMATS } from './formats.ts';
import { FRONTEND_TYPES } from './frontend-types.ts';
import { modeSchema } from './mode-schema.ts';

const jsonBackendSchema = z.object({ ip: z.string(), port: z.number(), share: z.number() });

const jsonFrontendSchema = z.object({
  /** `unknown` when the dump alone cannot say (the answer's `notes` say why and how to tell). */
  type: z.enum(FRONTEND_TYPES),
  ip: z.string(),
  port: z.number(),
  protocol: z.string(),
  backends: z.array(jsonBackendSchema),
  localOnly: z.boolean(),
  dropsWithoutLocalEndpoints: z.boolean(),
  affinity: z.nullable(z.object({ timeoutSeconds: z.number() })),
  /** loadBalancerSourceRanges the dataplane enforces; present only when it restricts the sources. */
  sourceRanges: z.optional(z.array(z.string())),
});
export type JsonFrontend = z.infer<typeof jsonFrontendSchema>;

export const explainResponseSchema = z.object({
  service: z.string(),
  format: z.enum(FORMATS),
  source: z.enum(['live', 'fixture']),
  /** Live only: the mode whose cluster was read, its node names (control plane first). */
  mode: z.optional(modeSchema),
  nodes: z.optional(z.array(z.string())),
  /** The node whose dataplane this is (a fixture says which node it was printed from). */
  node: z.optional(z.string()),
  /** Fixture only: `<format>/<name>`. */
  fixture: z.optional(z.string()),
  /** The headline count (rules, virtual servers, …) and finer counts, for "how big is this". */
  entries: z.number(),
  entriesLabel: z.string(),
  counts: z.record(z.string(), z.number()),
  frontends: z.array(jsonFrontendSchema),
  mermaid: z.string(),
  text: z.string(),
  /** What the parser skipped or had to guess (unknown lines or types, an unknown Service CIDR); absent when nothing. */
  notes: z.optional(z.array(z.string())),
});
export type ExplainResponse = z.infer<typeof explainResponseSchema>;

const fixtureInfoSchema = z.object({
  /** `<format>/<name>` */
  id: z.string(),
  format: z.enum(FORMATS),
  name: z.string(),
  description: z.string(),
  /** The node the output was printed from. */
  node: z.string(),
  /** Named Services in it. */
  services: z.array(z.string()),
});
export type FixtureInfo = z.infer<typeof fixtureInfoSchema>;

/** GET /api/dataplane/fixtures */
export const fixtureListSchema = z.object({ fixtures: z.array(fixtureInfoSchema) });

/** Kubernetes namespace / Service name: DNS labels. Checked on both sides before anything reads a cluster. */
const SERVICE_REF = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\/[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function isServiceRef(value: string): boolean {
  return SERVICE_REF.test(value);
}
