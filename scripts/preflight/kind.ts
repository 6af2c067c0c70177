/** kind: present, and new enough for the modes asked for (each record's `host.minKind`, and its node image's `host.minKubernetes`). */
import { CommandError, run, TIMEOUTS } from '../base/exec.ts';
import { modeRecord, type Mode } from '../catalogue/modes.ts';
import {
  compareVersions,
  KIND_VERSION,
  MIN_KIND_RECOMMENDED,
  NODE_IMAGE,
  nodeImageKubernetesVersion,
  parseKindVersion,
} from '../base/versions.ts';
import type { Finding } from './types.ts';

const UPGRADE_FIX = `Install kind v${KIND_VERSION}: https://kind.sigs.k8s.io/docs/user/quick-start/#installation (for example \`go install sigs.k8s.io/kind@v${KIND_VERSION}\`).`;

export async function checkKind(modes: readonly Mode[], signal?: AbortSignal): Promise<Finding[]> {
  let text: string;
  try {
    text = (await run('kind', ['version'], { timeoutMs: TIMEOUTS.quick, signal })).stdout;
  } catch (err) {
    if (!(err instanceof CommandError) || err.kind === 'aborted') throw err;
    const missing = err.kind === 'tool-missing';
    return [
      {
        id: 'kind',
        title: 'kind',
        status: 'fail',
        detail: missing ? 'kind is not installed: `kind` was not found on PATH.' : `\`kind version\` failed: ${err.message}`,
        fix: missing ? err.fix : UPGRADE_FIX,
      },
    ];
  }
  const version = parseKindVersion(text);
  if (!version)
    return [
      {
        id: 'kind',
        title: 'kind',
        status: 'warn',
        detail: `Could not read a version from \`kind version\`: ${text.trim().slice(0, 120)}`,
        fix: UPGRADE_FIX,
      },
    ];

  const findings: Finding[] = [];
  const records = modes.map(modeRecord);
  const tooOld = records.flatMap(({ id, host: { minKind } }) =>
    minKind !== null && compareVersions(version, minKind) < 0 ? [{ id, minKind }] : [],
  );
  if (tooOld.length) {
    const needs = tooOld.map((t) => t.minKind).reduce((a, b) => (compareVersions(a, b) >= 0 ? a : b));
    findings.push({
      id: 'kind',
      title: 'kind',
      status: 'fail',
      detail: `kind v${version} is too old for the ${tooOld.map((t) => t.id).join(' and ')} mode${tooOld.length > 1 ? 's' : ''} (needs kind v${needs} or newer).`,
      fix: UPGRADE_FIX,
    });
  } else if (compareVersions(version, MIN_KIND_RECOMMENDED) < 0) {
    findings.push({
      id: 'kind',
      title: 'kind',
      status: 'warn',
      detail: `kind v${version} is older than v${MIN_KIND_RECOMMENDED}, the release whose node image (Kubernetes ${nodeImageKubernetesVersion(NODE_IMAGE)}) the labs pin.`,
      fix: UPGRADE_FIX,
    });
  } else {
    findings.push({ id: 'kind', title: 'kind', status: 'ok', detail: `kind v${version}` });
  }
  // The pinned node image's Kubernetes, for each mode that needs a minimum (the nftables mode: 1.31).
  for (const { id, host } of records) {
    if (host.minKubernetes === null) continue;
    const k8s = nodeImageKubernetesVersion(NODE_IMAGE) ?? '0';
    const ok = compareVersions(k8s, host.minKubernetes) >= 0;
    findings.push({
      id: 'node-image',
      title: `Node image (${id})`,
      status: ok ? 'ok' : 'fail',
      detail: `Kubernetes ${k8s} ${ok ? 'supports' : 'predates'} ${host.who} (needs ${host.minKubernetes}+).`,
      fix: ok ? undefined : `Use the node image pinned in kind-configs/${id}.yaml.`,
    });
  }
  return findings;
}
