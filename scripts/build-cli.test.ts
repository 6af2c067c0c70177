// The compiled CLI as it is written to disk: `dplab help` reaches only the catalogue (no
// command's code, no package), each command is a chunk imported when it runs, and a build is
// a directory of its own that inputs.json names once it is whole. Built into a temporary
// directory (the project's dist-cli/ is left to dplab itself), then run through dplab.mjs.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from './build-cli.mjs';
import { CATALOGUE } from './commands/catalogue.ts';
import { projectRoot } from './base/paths.ts';

let out: string;
let entry: string;

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'dplab-build-cli-'));
  ({ entry } = await buildCli(out));
}, 120_000);
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** The relative modules a compiled file imports: `from "./x.mjs"` (static) and `import("./x.mjs")` (dynamic). */
function imports(file: string): { statics: string[]; dynamics: string[] } {
  const text = readFileSync(file, 'utf8');
  const abs = (m: RegExpMatchArray) => resolve(dirname(file), m[1]);
  return {
    statics: [...text.matchAll(/from\s*"(\.{1,2}\/[^"]+)"/g)].map(abs),
    dynamics: [...text.matchAll(/import\("(\.{1,2}\/[^"]+)"\)/g)].map(abs),
  };
}

/** Every file loaded with `file` before any dynamic import runs. */
function staticClosure(file: string): string[] {
  const seen = new Set<string>([file]);
  for (const f of seen) for (const dep of imports(f).statics) seen.add(dep);
  return [...seen];
}

/** The project-relative sources a compiled file was made from (its source map). */
function sources(file: string): string[] {
  const map = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
  return map.sources.map((s) => relative(projectRoot, resolve(dirname(file), s)));
}

describe('the compiled CLI', () => {
  it('dplab help loads the dispatch and the catalogue only: no command code, no package, a few kilobytes', () => {
    const loaded = staticClosure(entry);
    const from = loaded.flatMap(sources);
    expect(from).toContain('scripts/cli.ts');
    expect(from).toContain('scripts/commands/catalogue.ts');
    expect(from.filter((s) => s.startsWith('node_modules/'))).toEqual([]);
    for (const c of CATALOGUE) expect(from).not.toContain(`scripts/commands/${c.name}.ts`);
    const bytes = loaded.reduce((n, f) => n + readFileSync(f).length, 0);
    expect(bytes).toBeLessThan(40_000);
  });

  it('each command is its own chunk, imported only when it runs', () => {
    const lazy = imports(entry).dynamics;
    expect(lazy).toHaveLength(CATALOGUE.length);
    // A command's file may sit in a chunk shared with another command (goto reads check's exit codes).
    for (const c of CATALOGUE) {
      const chunk = lazy.find((f) => staticClosure(f).flatMap(sources).includes(`scripts/commands/${c.name}.ts`));
      expect(chunk, c.name).toBeDefined();
    }
    // `serve` brings the server, not the portal.
    const serve = lazy.find((f) => sources(f).includes('scripts/commands/serve.ts'))!;
    const serveFrom = staticClosure(serve).flatMap(sources);
    expect(serveFrom).toContain('scripts/server/http.ts');
    expect(serveFrom).not.toContain('scripts/portal/server.ts');
  });

  it('a build is a fresh directory named by inputs.json; the previous one stays, older ones go once stale', async () => {
    const first = dirname(entry);
    const inputs = () => JSON.parse(readFileSync(join(out, 'inputs.json'), 'utf8')) as { build: string; entry: string; inputs: string[] };
    expect(join(out, inputs().build, inputs().entry)).toBe(entry);
    expect(inputs().inputs).toContain('scripts/commands/catalogue.ts');

    const second = dirname((await buildCli(out)).entry);
    expect(second).not.toBe(first);
    expect(join(out, inputs().build)).toBe(second);
    // A dplab that read the old inputs.json a moment ago still finds every chunk it names.
    expect(existsSync(join(first, 'cli.mjs'))).toBe(true);

    // Two builds on, the first is neither current nor previous; once it is older than a minute it is removed.
    const old = new Date(Date.now() - 5 * 60_000);
    utimesSync(first, old, old);
    const third = dirname((await buildCli(out)).entry);
    expect(existsSync(first)).toBe(false);
    expect(existsSync(second)).toBe(true);
    expect(readdirSync(out).sort()).toEqual([relative(out, second), relative(out, third), 'inputs.json'].sort());
  }, 120_000);
});

describe('dplab through the compiled CLI', () => {
  const dplab = (...args: string[]) =>
    spawnSync(process.execPath, [join(projectRoot, 'scripts', 'dplab.mjs'), ...args], {
      encoding: 'utf8',
      env: { ...process.env, DPLAB_TSX: '' },
      timeout: 60_000,
    });

  it('help lists every command; help <command> shows its usage; a usage error names the command and its usage', () => {
    const help = dplab('help');
    expect(help.status).toBe(0);
    for (const c of CATALOGUE) expect(help.stdout).toContain(`  ${c.name} `);
    const one = dplab('help', 'down');
    expect(one.stdout).toBe(`${CATALOGUE.find((c) => c.name === 'down')!.summary}\n\ndplab down <iptables|ipvs|nftables|cilium> | --all\n`);
    const wrong = dplab('down', 'nope');
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toContain('Error: dplab down: unknown mode "nope"');
    expect(wrong.stderr).toContain('Fix: Usage: dplab down <iptables|ipvs|nftables|cilium> | --all');
  }, 120_000);

  it('dplab portal serves its own pages: files the code reads are found from the project, not from the chunk', async () => {
    // The portal read its pages beside its module, which compiled is dist-cli/<build>/chunks/:
    // `dplab portal` died at start with ENOENT there, while every test through tsx passed.
    const state = mkdtempSync(join(tmpdir(), 'dplab-compiled-portal-'));
    const child = spawn(process.execPath, [join(projectRoot, 'scripts', 'dplab.mjs'), 'portal', '--port', '0', '--shared-user'], {
      env: { ...process.env, DPLAB_TSX: '', DPLAB_STATE_DIR: state },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let out = '';
      const joinUrl = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no join link in 60 s: ${out}`)), 60_000);
        const take = (d: Buffer) => {
          out += d.toString();
          const m = /Learners: (\S+)/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]);
          }
        };
        child.stdout!.on('data', take);
        child.stderr!.on('data', take);
        child.once('exit', (code) => reject(new Error(`dplab portal exited (${code}): ${out}`)));
      });
      const res = await fetch(joinUrl);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('<form');
    } finally {
      child.kill();
      rmSync(state, { recursive: true, force: true });
    }
  }, 120_000);

  it('--verbose stack traces name the TypeScript sources; --provider is checked before any command loads', () => {
    const verbose = dplab('--verbose', 'explain', '--input', '/nonexistent/dump', '--format', 'iptables-save', '--service', 'a/b');
    expect(verbose.status).toBe(2);
    expect(verbose.stderr).toMatch(/at .*scripts\/commands\/explain\.ts:\d+/);
    const provider = dplab('--provider', 'docker', 'status');
    expect(provider.status).toBe(2);
    expect(provider.stderr).toBe('Error: --provider must be one of kind, sim (got "docker").\n');
  }, 120_000);
});
