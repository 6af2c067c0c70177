// A command that a signal ended says so, instead of reporting "exit code -1".
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CommandError, howItEnded, run, tellingLine, timeoutFactorFromEnv } from './exec.ts';

describe('run', () => {
  it('reports a killed command with its signal', async () => {
    const err = await run('sh', ['-c', 'kill -KILL $$'], { timeoutMs: 10_000 }).catch((e) => e);
    expect(err).toBeInstanceOf(CommandError);
    expect(err.signal).toBe('SIGKILL');
    expect(err.message).toBe("`sh -c 'kill -KILL $$'` failed (killed by SIGKILL).");
    expect(err.details).toMatch(/killed by SIGKILL after \d+ ms/);
  });

  it('reports an ordinary failure with its exit code', async () => {
    const err = await run('sh', ['-c', 'exit 3'], { timeoutMs: 10_000 }).catch((e) => e);
    expect(howItEnded(err)).toBe('exit code 3');
    expect(err.signal).toBeUndefined();
  });
});

describe('pathFirst', () => {
  it("finds the command in its folders first and hands them on, without changing the runner's PATH", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dplab-pathfirst-'));
    const prog = join(dir, 'dplab-only-here');
    writeFileSync(prog, '#!/bin/sh\necho "$PATH"\n');
    chmodSync(prog, 0o755);
    const before = process.env.PATH;
    const r = await run('dplab-only-here', [], { timeoutMs: 10_000, pathFirst: [dir] });
    expect(r.stdout.trim()).toBe(`${dir}${delimiter}${before}`);
    expect(process.env.PATH).toBe(before);
    // Without it, the command is not found: the folder reached it only through this call.
    const err = await run('dplab-only-here', [], { timeoutMs: 10_000 }).catch((e) => e);
    expect(err).toMatchObject({ kind: 'tool-missing' });
  });
});

describe('the line a failure message quotes', () => {
  it("is kind's closing ERROR line, not its first progress line", () => {
    const stderr = [
      'Creating cluster "dplab-ipvs" ...',
      ' • Preparing nodes 📦 📦 📦  ...',
      'ERROR: failed to create cluster: could not find a log line that matches "Reached target .*Multi-User System"',
      '',
    ].join('\n');
    expect(tellingLine(stderr)).toBe(
      'ERROR: failed to create cluster: could not find a log line that matches "Reached target .*Multi-User System"',
    );
  });
  it('is the first line when no line starts like an error', () => {
    expect(tellingLine('\nunknown flag: --bogus\nSee kind --help\n')).toBe('unknown flag: --bogus');
    expect(tellingLine('')).toBe('');
  });
});

describe('DPLAB_TIMEOUT_FACTOR', () => {
  it('stretches the named timeouts by a factor of 1 or more, and ignores anything else', () => {
    expect(timeoutFactorFromEnv({ DPLAB_TIMEOUT_FACTOR: '4' })).toBe(4);
    expect(timeoutFactorFromEnv({ DPLAB_TIMEOUT_FACTOR: '2.5' })).toBe(2.5);
    for (const v of [undefined, '', '0.5', '0', '-3', 'fast']) expect(timeoutFactorFromEnv({ DPLAB_TIMEOUT_FACTOR: v })).toBe(1);
  });
});
