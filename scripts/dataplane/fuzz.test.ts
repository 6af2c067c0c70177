// Damaged input (truncated, shuffled, noise) must end in a ParseError or a valid model, never a
// crash and never shares that do not add up.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FORMATS, ParseError, parse, type DataplaneModel, type Format } from './index.ts';
import { SHARE_EPSILON } from './model.ts';
import { prng } from '../../test/dataplane/prng.ts';

const DIR = join(import.meta.dirname, 'fixtures');
const SEED = 20260105;
const CASES_PER_FIXTURE = 25;
const NOISE_CASES = 200;

function checkOutcome(format: Format, text: string): 'model' | 'parse-error' {
  let model: DataplaneModel;
  try {
    model = parse(format, text, { names: { '10.96.45.112:80': 'default/web' } });
  } catch (err) {
    if (err instanceof ParseError) {
      expect(err.line).toBeGreaterThanOrEqual(0);
      return 'parse-error';
    }
    throw err;
  }
  for (const sp of model.services) {
    for (const fe of sp.frontends) {
      if (fe.backends.length === 0) continue;
      const total = fe.backends.reduce((a, b) => a + b.share, 0);
      expect(Math.abs(total - 1)).toBeLessThanOrEqual(SHARE_EPSILON);
      for (const b of fe.backends) expect(b.share).toBeGreaterThanOrEqual(0);
    }
  }
  return 'model';
}

function shuffle<T>(items: T[], rnd: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

const fixtures = FORMATS.flatMap((format) =>
  readdirSync(join(DIR, format))
    .filter((f) => /\.(txt|json)$/.test(f))
    .map((f) => ({ format, file: f, text: readFileSync(join(DIR, format, f), 'utf8') })),
);

describe('fuzz: damaged fixtures', () => {
  it.each(fixtures.map((f) => [`${f.format}/${f.file}`, f] as const))('%s', (_name, f) => {
    const rnd = prng(SEED + f.text.length);
    const lines = f.text.split('\n');
    for (let i = 0; i < CASES_PER_FIXTURE; i++) {
      checkOutcome(f.format, f.text.slice(0, Math.floor(rnd() * f.text.length)));
      checkOutcome(f.format, lines.slice(0, Math.floor(rnd() * lines.length)).join('\n'));
      checkOutcome(f.format, shuffle(lines, rnd).join('\n'));
      const dropped = lines.filter(() => rnd() > 0.1).join('\n');
      checkOutcome(f.format, dropped);
      const pos = Math.floor(rnd() * f.text.length);
      checkOutcome(f.format, `${f.text.slice(0, pos)}${String.fromCharCode(32 + Math.floor(rnd() * 90))}${f.text.slice(pos + 1)}`);
    }
  });

  it('truncated iptables-save is a ParseError, not an empty model', () => {
    const text = readFileSync(join(DIR, 'iptables-save', 'clusterip.txt'), 'utf8');
    expect(() => parse('iptables-save', text.slice(0, text.indexOf('COMMIT')))).toThrow(ParseError);
  });

  it('iptables-restore input is refused with its line', () => {
    try {
      parse('iptables-save', '*nat\n:KUBE-SVC-X - [0:0]\n-X KUBE-SVC-OLD\nCOMMIT\n');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ParseError);
      expect((err as ParseError).line).toBe(3);
      expect((err as ParseError).text).toBe('-X KUBE-SVC-OLD');
    }
  });

  it('a quoted target with escapes is unescaped and followed to its chain', () => {
    const text = [
      '*nat',
      ':KUBE-SERVICES - [0:0]',
      ':KUBE-SVC-A"B - [0:0]',
      ':KUBE-SEP-X - [0:0]',
      '-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m tcp --dport 80 -j "KUBE-SVC-A\\"B"',
      '-A KUBE-SVC-A"B -j KUBE-SEP-X',
      '-A KUBE-SEP-X -p tcp -m tcp -j DNAT --to-destination 10.244.0.5:8080',
      'COMMIT',
      '',
    ];
    const [fe] = parse('iptables-save', text.join('\n')).services.flatMap((s) => s.frontends);
    expect(fe.path).toEqual(['KUBE-SERVICES', 'KUBE-SVC-A"B']);
    expect(fe.backends.map((b) => `${b.ip}:${b.port}`)).toEqual(['10.244.0.5:8080']);
  });

  it('a rule for a chain only another table declares is refused, not dropped', () => {
    // filter declares KUBE-FORWARD and has a rule for it just before; nat does not declare it.
    const text = [
      '*filter',
      ':KUBE-FORWARD - [0:0]',
      '-A KUBE-FORWARD -j ACCEPT',
      'COMMIT',
      '*nat',
      ':KUBE-SERVICES - [0:0]',
      '-A KUBE-FORWARD -j DROP',
      'COMMIT',
      '',
    ];
    try {
      parse('iptables-save', text.join('\n'));
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ParseError);
      expect((err as ParseError).line).toBe(7);
      expect((err as ParseError).message).toContain('rule for undeclared chain KUBE-FORWARD');
    }
  });
});

describe('fuzz: random input', () => {
  const ALPHABET = ' \n\t-:*/."[]{}0123456789ABCDEFKUBE-SVCnatCOMMIT->=>TCPUDPrrMasq';
  it.each([...FORMATS])('%s never crashes on noise', (format) => {
    const rnd = prng(SEED);
    for (let i = 0; i < NOISE_CASES; i++) {
      const len = Math.floor(rnd() * 400);
      let s = '';
      for (let j = 0; j < len; j++) s += ALPHABET[Math.floor(rnd() * ALPHABET.length)];
      expect(checkOutcome(format, s)).toMatch(/model|parse-error/);
    }
    expect(checkOutcome(format, '')).toBe('parse-error');
  });
});
