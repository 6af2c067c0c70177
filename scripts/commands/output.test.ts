// Every `dplab` command writes through its CommandContext (ctx.stdout / ctx.stderr), so tests, the
// runner and the portal can run any command in-process and get its output. Two guards: the
// sources (a command file, and every module a command loads, name no process stream), and runs
// of commands in-process whose output arrives through the context and nowhere else.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../cli.ts';
import { projectRoot } from '../base/paths.ts';
import { fixtureFile } from '../dataplane/fixture-catalog.ts';
import { CATALOGUE } from './catalogue.ts';
import { commandContext } from './command.ts';
import { loadCommand } from './index.ts';

const COMMANDS_DIR = join(projectRoot, 'scripts', 'commands');

/** Writing to the process itself: its streams, the console, or a child's output handed straight to them. */
const PROCESS_OUTPUT = [
  /\bprocess\.(stdout|stderr)\b/,
  /\bconsole\.(log|info|warn|error|debug|trace|dir|table)\b/,
  /(['"])inherit\1/,
  /\binheritOutput\b/,
];

/** Source without comments, so a comment may name what the code must not do. Line numbers stay. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

const writesToProcess = (line: string) => PROCESS_OUTPUT.some((re) => re.test(line));

/** `file:line: text` for every line of `file` that writes to the process. */
function processWrites(file: string): string[] {
  return withoutComments(readFileSync(file, 'utf8'))
    .split('\n')
    .flatMap((line, i) => (writesToProcess(line) ? [`${relative(projectRoot, file)}:${i + 1}: ${line.trim()}`] : []));
}

const RELATIVE_IMPORT = /\b(?:import|export)\s[^'"]*?\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

/** The project modules `entry` loads (static and dynamic relative imports, type-only ones too), itself included. */
function closure(entry: string): string[] {
  const seen = new Set<string>([entry]);
  for (const file of seen) {
    for (const m of readFileSync(file, 'utf8').matchAll(RELATIVE_IMPORT)) {
      const target = resolve(dirname(file), m[1] ?? m[2]);
      if (/\.(ts|mts|js|mjs)$/.test(target)) seen.add(target);
    }
  }
  return [...seen];
}

/**
 * Modules a command loads that may write to the process, and why. The server and the portal
 * (`dplab serve`, `dplab portal`) are long-running and log as servers; the command files that
 * start them are still held to the rule.
 */
const MAY_WRITE_TO_THE_PROCESS: Record<string, string> = {
  'scripts/commands/command.ts': "commandContext(): the CLI's context is the process's streams",
  'scripts/base/exec.ts': 'the inheritOutput option of run(); the scan says no module a command loads passes it (only exec.ts names it)',
};
const LONG_RUNNING = ['scripts/server/', 'scripts/portal/'];

describe('the sources: no command writes to the process', () => {
  const files = readdirSync(COMMANDS_DIR)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && f !== 'command.ts')
    .map((f) => join(COMMANDS_DIR, f));

  it('every command of the catalogue has its file here', () => {
    const names = files.map((f) => relative(COMMANDS_DIR, f));
    for (const c of CATALOGUE) expect(names).toContain(`${c.name}.ts`);
  });

  it.each(files.map((f) => [relative(projectRoot, f), f]))('%s writes only through ctx.stdout / ctx.stderr', (_name, file) => {
    expect(processWrites(file)).toEqual([]);
  });

  it('nor does any module a command loads, but the few named (with the reason)', () => {
    const loaded = closure(join(COMMANDS_DIR, 'index.ts')).map((f) => relative(projectRoot, f));
    // The walk reaches the commands and what they call: the labs, the clusters, the dataplane.
    for (const m of ['scripts/commands/explain.ts', 'scripts/clusters/cli-progress.ts', 'scripts/labs/engine.ts'])
      expect(loaded).toContain(m);
    const writers = loaded
      .filter((f) => !(f in MAY_WRITE_TO_THE_PROCESS) && !LONG_RUNNING.some((d) => f.startsWith(d)))
      .flatMap((f) => processWrites(join(projectRoot, f)));
    expect(writers).toEqual([]);
    // An allowance that no longer applies goes.
    for (const f of Object.keys(MAY_WRITE_TO_THE_PROCESS)) {
      expect(loaded, f).toContain(f);
      expect(processWrites(join(projectRoot, f)), f).not.toEqual([]);
    }
  });

  it('the scan sees what it looks for (and skips comments)', () => {
    const probe = (text: string) => withoutComments(text).split('\n').some(writesToProcess);
    expect(probe("process.stdout.write('x');")).toBe(true);
    expect(probe('const out = process.stderr;')).toBe(true);
    expect(probe('console.log(x);')).toBe(true);
    expect(probe("spawn(cmd, args, { stdio: 'inherit' });")).toBe(true);
    expect(probe('ctx.stdout.write(x); // not process.stdout')).toBe(false);
    expect(probe('/** process.stdout in the CLI */')).toBe(false);
  });
});

/** The process's own streams while a command runs in-process: anything written there leaked past ctx. */
let restore: (() => void) | undefined;
function trapProcessOutput(): { leaked: () => string } {
  let leaked = '';
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  const trap = ((t: string | Uint8Array) => ((leaked += String(t)), true)) as typeof process.stdout.write;
  process.stdout.write = trap;
  process.stderr.write = trap;
  restore = () => {
    process.stdout.write = out;
    process.stderr.write = err;
    restore = undefined;
  };
  return { leaked: () => leaked };
}
afterEach(() => restore?.());

function sinks() {
  const got = { out: '', err: '' };
  return {
    got,
    stdout: { write: (t: string) => (got.out += t) },
    stderr: { write: (t: string) => (got.err += t) },
  };
}

describe('commands run in-process: the output arrives through ctx', () => {
  it('dplab explain --input: the table on ctx.stdout, nothing on the process', async () => {
    const { got, stdout, stderr } = sinks();
    const trap = trapProcessOutput();
    const explain = await loadCommand('explain');
    const argv = ['--input', fixtureFile('iptables-save', 'clusterip'), '--format', 'iptables-save', '--service', 'default/web'];
    const code = await explain.run(argv, commandContext({ stdout, stderr }));
    restore?.();
    expect(code).toBe(0);
    expect(trap.leaked()).toBe('');
    expect(got.out).toMatch(/^Service: default\/web {3}\[iptables-save: /);
    expect(got.out).toContain('ClusterIP    10.96.45.112:80/TCP');
    expect(got.err).toBe('');
  });

  it('dplab explain with a usage mistake: the error and its fix on ctx.stderr (exit 2), nothing on the process', async () => {
    const { got, stdout, stderr } = sinks();
    const trap = trapProcessOutput();
    const code = await main(['explain', '--input', fixtureFile('ipvsadm', 'clusterip'), '--format', 'ipvsadm'], { stdout, stderr });
    restore?.();
    expect(code).toBe(2);
    expect(trap.leaked()).toBe('');
    expect(got.out).toBe('');
    expect(got.err).toMatch(
      /^Error: dplab explain: give exactly one of --service <ns\/name> or --frontend <ip:port>\.\nFix: Usage: dplab explain /,
    );
  });

  it('dplab labs: the list on ctx.stdout, nothing on the process', async () => {
    const { got, stdout, stderr } = sinks();
    const trap = trapProcessOutput();
    const code = await (await loadCommand('labs')).run([], commandContext({ stdout, stderr }));
    restore?.();
    expect(code).toBe(0);
    expect(trap.leaked()).toBe('');
    expect(got.out).toMatch(/^first-service — /);
    expect(got.out.trimEnd().split('\n').at(-1)).toBe('Check a step: dplab check <lab> [<step>] [--mode <mode>]');
  });
});
