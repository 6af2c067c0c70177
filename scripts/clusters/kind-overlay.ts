/**
 * The one switch between a learner's kind path and the project's own test environment
 * (`npm run testenv`, test/kind/): `DPLAB_KIND_OVERLAY` names a JSON file that says what differs
 * on a machine with no image registry and an unusual host. A learner never sets it; without it
 * every function here returns what the kind configs and versions.ts say.
 *
 * What it can change, and nothing else: the node image (built locally, so it cannot match the
 * pinned digest), kubeadm and containerd patches appended to the mode's config (the kubelet's
 * `failCgroupV1: false` on a cgroup v1 host; containerd's `restrict_oom_score_adj` where root
 * lacks CAP_SYS_RESOURCE), where kind publishes the API server (an engine in a guest VM), and
 * where Cilium's chart comes from with extra values (local images without digests, no Envoy,
 * no capability the host cannot grant), and how much slower than a laptop provisioning may be. `dplab up` says in its progress that the overlay is on.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { DplabError } from '../base/errors.ts';
import { stateDir } from '../base/paths.ts';
import { describeIssues } from '../wire/validate.ts';
import { clusterName, kindConfigPath, MODES, type Mode } from '../catalogue/modes.ts';
import { NODE_IMAGE } from '../base/versions.ts';

export const KIND_OVERLAY_ENV = 'DPLAB_KIND_OVERLAY';

const kindOverlaySchema = z
  .object({
    /** Who wrote the file and why, in a few words ("dplab test environment, cgroup v1 host"). */
    name: z.string().min(1),
    /** The image every node runs instead of NODE_IMAGE. */
    nodeImage: z.string().min(1).optional(),
    /** kubeadm config patches (YAML documents) appended to the mode's `kubeadmConfigPatches`. */
    kubeadmConfigPatches: z.array(z.string().min(1)).default([]),
    /** containerd config patches (TOML) appended to the mode's `containerdConfigPatches`. */
    containerdConfigPatches: z.array(z.string().min(1)).default([]),
    /** `networking.apiServerAddress`: where the API server is published (the engine's own address when it runs elsewhere). */
    apiServerAddress: z.string().min(1).optional(),
    /**
     * With an address that is not this machine's, kind cannot pick a free port by listening on
     * it, so the port is given: this base plus the mode's index in MODES (one port per mode).
     */
    apiServerPortBase: z.number().int().min(1024).max(65000).optional(),
    cilium: z
      .object({
        /** A chart folder on this machine, used instead of the Helm repository. */
        chart: z.string().min(1),
        /** Extra `--set` values (`image.useDigest=false`, …). */
        values: z.array(z.string().min(1)).default([]),
      })
      .strict()
      .optional(),
  })
  .strict();

export type KindOverlay = z.output<typeof kindOverlaySchema>;

/** The overlay in force, or undefined on a learner's machine. Read on every call: tests and the test environment set it per process. */
export function kindOverlay(): KindOverlay | undefined {
  const path = process.env[KIND_OVERLAY_ENV];
  if (path === undefined || path === '') return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new DplabError(`${KIND_OVERLAY_ENV}=${path} cannot be read as JSON: ${err instanceof Error ? err.message : String(err)}`, {
      fix: `Unset ${KIND_OVERLAY_ENV} (a learner never needs it), or run \`npm run testenv -- up\` again to rewrite the file.`,
      status: 400,
    });
  }
  const parsed = kindOverlaySchema.safeParse(raw);
  if (!parsed.success)
    throw new DplabError(`${KIND_OVERLAY_ENV}=${path} is not a kind overlay: ${describeIssues(parsed.error)}.`, {
      fix: `Unset ${KIND_OVERLAY_ENV}, or run \`npm run testenv -- up\` again to rewrite the file.`,
      status: 400,
    });
  return parsed.data;
}

/** The node image the cluster runs (and the probe helper container uses). */
export function nodeImage(): string {
  return kindOverlay()?.nodeImage ?? NODE_IMAGE;
}

/** The mode's kind config with the overlay (if any) and the workers' image (if any) applied (YAML text); comments of the original are kept. */
function generatedKindConfig(mode: Mode, overlay: KindOverlay | undefined, workerImage: string | undefined): string {
  const doc = parseDocument(readFileSync(kindConfigPath(mode), 'utf8'));
  const nodes = doc.get('nodes');
  const roles = nodes && typeof nodes === 'object' && 'items' in nodes ? kindNodeRoles(mode) : [];
  for (const [i, role] of roles.entries()) {
    const image = role === 'worker' ? (workerImage ?? overlay?.nodeImage) : overlay?.nodeImage;
    if (image) doc.setIn(['nodes', i, 'image'], image);
  }
  const said: string[] = [];
  if (overlay) {
    if (overlay.apiServerAddress) doc.setIn(['networking', 'apiServerAddress'], overlay.apiServerAddress);
    if (overlay.apiServerPortBase) doc.setIn(['networking', 'apiServerPort'], overlay.apiServerPortBase + MODES.indexOf(mode));
    for (const key of ['kubeadmConfigPatches', 'containerdConfigPatches'] as const) {
      if (overlay[key].length === 0) continue;
      const existing = (doc.get(key) as { toJSON(): unknown } | undefined)?.toJSON();
      doc.set(key, doc.createNode([...(Array.isArray(existing) ? existing.map(String) : []), ...overlay[key]]));
    }
    said.push(`with ${KIND_OVERLAY_ENV} (${overlay.name})`);
  }
  if (workerImage) said.push(`with the workers from ${workerImage}, the node image with the lab images inside (lab-node-image.ts)`);
  doc.commentBefore = ` Generated from ${kindConfigPath(mode)} ${said.join('; ')}.\n${doc.commentBefore ?? ''}`;
  return doc.toString();
}

/**
 * The config file `kind create cluster` gets: the mode's own, or a generated copy in the state
 * folder when the overlay is on or the workers start from the node image with the lab images.
 */
export function kindConfigFor(mode: Mode, workerImage?: string): string {
  const overlay = kindOverlay();
  if (!overlay && !workerImage) return kindConfigPath(mode);
  const dir = join(stateDir(), 'kind');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${clusterName(mode)}.yaml`);
  writeFileSync(path, generatedKindConfig(mode, overlay, workerImage));
  return path;
}

/** The roles of the nodes the mode's kind config makes (its `nodes:` entries; kind's default is one control plane). */
function kindNodeRoles(mode: Mode): string[] {
  const nodes = parseDocument(readFileSync(kindConfigPath(mode), 'utf8')).toJS()?.nodes as unknown;
  if (!Array.isArray(nodes) || nodes.length === 0) return ['control-plane'];
  return nodes.map((n: { role?: unknown }) => (typeof n?.role === 'string' ? n.role : 'control-plane'));
}

/** The worker nodes kind makes for the mode's config (`<name>-worker`, `<name>-worker2`, …), in order. */
export function kindWorkerNames(mode: Mode, name: string): string[] {
  const workers = kindNodeRoles(mode).filter((r) => r === 'worker').length;
  return Array.from({ length: workers }, (_, i) => `${name}-worker${i === 0 ? '' : i + 1}`);
}

/** How many nodes the mode's kind config makes. */
export function kindNodeCount(mode: Mode): number {
  return kindNodeRoles(mode).length;
}
