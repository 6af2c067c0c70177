/**
 * The seat runner image's Dockerfile, checked statically (its base images cannot be pulled on
 * these machines): its pinned versions are the project's, it runs as the user the seat pod
 * expects, it serves on the port the seat's Service targets, every download is checked against
 * its published checksum, and everything it copies from the build context exists and is not
 * ignored. The same content, built without Docker's build (test/kind/seat-images.ts), runs as
 * real seat pods on a real cluster in `npm run test:kind` (test/kind/portal.kind.test.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HELM_VERSION, KIND_VERSION, KUBERNETES_VERSION } from '../../base/versions.ts';
import { projectRoot } from '../../base/paths.ts';
import { DIND_IMAGE, RUNNER_UID, SEAT_RUNNER_PORT } from '../seat-objects.ts';

const dir = join(projectRoot, 'scripts', 'portal', 'image');
const text = readFileSync(join(dir, 'Dockerfile'), 'utf8');
/** Instructions with their continuation lines joined, comments dropped. */
const instructions = text
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'))
  .map((l) => {
    const [op, ...rest] = l.split(/\s+/);
    return { op: op.toUpperCase(), args: rest.join(' ') };
  });
const args = Object.fromEntries(
  instructions.filter((i) => i.op === 'ARG' && i.args.includes('=')).map((i) => i.args.split('=') as [string, string]),
);

describe('the seat runner image (scripts/portal/image/Dockerfile), statically', () => {
  it('uses only known instructions, starts from pinned images and names every stage it copies from', () => {
    const known = new Set(['ARG', 'FROM', 'WORKDIR', 'COPY', 'RUN', 'ENV', 'USER', 'EXPOSE', 'ENTRYPOINT', 'CMD']);
    expect(instructions.filter((i) => !known.has(i.op))).toEqual([]);
    expect(args.NODE_IMAGE).toMatch(/^node:20\.\d+\.\d+-bookworm-slim$/);
    const stages = instructions
      .filter((i) => i.op === 'FROM')
      .map((i) => / AS (\S+)$/i.exec(i.args)?.[1])
      .filter(Boolean);
    expect(stages).toEqual(['build', 'docker-cli']);
    for (const from of instructions.filter((i) => i.op === 'COPY' && i.args.includes('--from='))) {
      expect(stages).toContain(/--from=(\S+)/.exec(from.args)![1]);
    }
  });

  it('pins kind, kubectl and helm to scripts/base/versions.ts, and the Docker CLI to the dind sidecar’s release', () => {
    expect(args.KIND_VERSION).toBe(KIND_VERSION);
    expect(args.KUBERNETES_VERSION).toBe(KUBERNETES_VERSION);
    expect(args.HELM_VERSION).toBe(HELM_VERSION);
    const dindRelease = /^docker:(\d+\.\d+\.\d+)-dind$/.exec(DIND_IMAGE)![1];
    expect(args.DOCKER_CLI_IMAGE).toBe(`docker:${dindRelease}-cli`);
  });

  it('checks every download against its published checksum before installing it', () => {
    const run = instructions
      .filter((i) => i.op === 'RUN')
      .map((i) => i.args)
      .join('\n');
    const downloads = [...run.matchAll(/curl -fsSLO "([^"]+)"/g)].map((m) => m[1]);
    const binaries = downloads.filter((u) => !/\.sha256(sum)?$/.test(u));
    expect(binaries).toHaveLength(3);
    for (const b of binaries) expect(downloads).toContain(b.endsWith('kubectl') ? `${b}.sha256` : `${b}.sha256sum`);
    expect(run.match(/sha256sum -c/g)).toHaveLength(3);
    expect(run.indexOf('sha256sum -c')).toBeLessThan(run.indexOf('install -m 0755'));
  });

  it('runs `dplab serve` as the seat pod’s user on the Service’s port', () => {
    expect(instructions.find((i) => i.op === 'USER')!.args).toBe(`${RUNNER_UID}:${RUNNER_UID}`);
    expect(instructions.find((i) => i.op === 'EXPOSE')!.args).toBe(String(SEAT_RUNNER_PORT));
    expect(JSON.parse(instructions.find((i) => i.op === 'ENTRYPOINT')!.args)).toEqual(['node', '/opt/dplab/scripts/dplab.mjs']);
    expect(JSON.parse(instructions.find((i) => i.op === 'CMD')!.args)).toEqual([
      'serve',
      '--host',
      '0.0.0.0',
      '--port',
      String(SEAT_RUNNER_PORT),
    ]);
    expect(existsSync(join(projectRoot, 'scripts', 'dplab.mjs'))).toBe(true);
  });

  it('copies from the context only what exists, and the context leaves out node_modules and the build', () => {
    const sources = instructions
      .filter((i) => i.op === 'COPY' && !i.args.includes('--from='))
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    expect(sources).toEqual(['package.json', 'package-lock.json', '.']);
    for (const s of sources) expect(existsSync(join(projectRoot, s)), s).toBe(true);
    const ignored = readFileSync(join(dir, 'Dockerfile.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim());
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.git']));
  });
});
