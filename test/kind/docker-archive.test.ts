// The archive writer: repositories first with every image's tags (how kind's builder counts
// extra images as built), one copy of a shared layer, and a config that names the layers' digests.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256File, splitTag, tarLayer, writeDockerArchive } from './docker-archive.ts';

describe('docker-archive writer', () => {
  it('writes repositories then manifest.json, every tag, each layer once, configs with diff_ids', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dplab-archive-'));
    mkdirSync(join(dir, 'a/usr/bin'), { recursive: true });
    writeFileSync(join(dir, 'a/usr/bin/tool'), '#!/bin/sh\necho a\n');
    mkdirSync(join(dir, 'b'), { recursive: true });
    writeFileSync(join(dir, 'b/app'), 'b');
    await tarLayer(join(dir, 'a'), join(dir, 'a.tar'));
    await tarLayer(join(dir, 'b'), join(dir, 'b.tar'));
    // The same folder tars to the same bytes: stamps and digests are stable.
    await tarLayer(join(dir, 'a'), join(dir, 'a2.tar'));
    expect(await sha256File(join(dir, 'a2.tar'))).toBe(await sha256File(join(dir, 'a.tar')));

    const out = join(dir, 'out.tar');
    await writeDockerArchive(
      [
        {
          tags: ['registry.k8s.io/one:1.0', 'registry.k8s.io/one:1'],
          layers: [join(dir, 'a.tar')],
          config: { Entrypoint: ['/usr/bin/tool'] },
        },
        { tags: ['docker.io/kindest/two:v2'], layers: [join(dir, 'a.tar'), join(dir, 'b.tar')], config: { StopSignal: 'SIGRTMIN+3' } },
      ],
      out,
    );
    const names = execFileSync('tar', ['-tf', out], { encoding: 'utf8' }).trim().split('\n');
    expect(names.slice(0, 2)).toEqual(['repositories', 'manifest.json']);
    expect(names.filter((n) => n.endsWith('layer.tar'))).toHaveLength(2);
    const read = (name: string) => JSON.parse(execFileSync('tar', ['-xOf', out, name], { encoding: 'utf8' }));
    expect(Object.keys(read('repositories')).sort()).toEqual(['docker.io/kindest/two', 'registry.k8s.io/one']);
    expect(Object.keys(read('repositories')['registry.k8s.io/one']).sort()).toEqual(['1', '1.0']);
    const manifest = read('manifest.json') as { Config: string; RepoTags: string[]; Layers: string[] }[];
    expect(manifest.map((m) => m.RepoTags)).toEqual([['registry.k8s.io/one:1.0', 'registry.k8s.io/one:1'], ['docker.io/kindest/two:v2']]);
    const two = read(manifest[1].Config);
    expect(two.config.StopSignal).toBe('SIGRTMIN+3');
    expect(two.rootfs.diff_ids).toEqual([
      `sha256:${await sha256File(join(dir, 'a.tar'))}`,
      `sha256:${await sha256File(join(dir, 'b.tar'))}`,
    ]);
    expect(manifest[1].Layers[0]).toBe(manifest[0].Layers[0]);
    expect(readFileSync(out).length).toBeGreaterThan(0);
  });

  it('splits references at the tag, not at a registry port', () => {
    expect(splitTag('localhost:5000/x/y:v1')).toEqual(['localhost:5000/x/y', 'v1']);
    expect(() => splitTag('localhost:5000/x/y')).toThrow(/no tag/);
  });
});
