// Real kernel tier: every iptables and nft fixture is loaded into a fresh network namespace and
// read back; the readback must parse to the same model, so the fixtures are rules the kernel takes.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, type DataplaneModel } from './index.ts';
import { loadableNftJson, loadableNftScript, nfacctNames, whyNot } from '../../test/dataplane/netns-lab.ts';

const DIR = join(import.meta.dirname, 'fixtures');
const reason = whyNot({ veth: false });
if (reason) console.warn(`kernel tests skipped: ${reason}`);

const created: string[] = [];
let counter = 0;
function freshNamespace(): string {
  const ns = `dplab-test-${process.pid}-${counter++}`;
  execFileSync('ip', ['netns', 'add', ns]);
  created.push(ns);
  return ns;
}
const inNs = (ns: string, argv: string[], input?: string) =>
  execFileSync('ip', ['netns', 'exec', ns, ...argv], { input, encoding: 'utf8', maxBuffer: 64 << 20 });

// nft 1.0.6 cannot read JSON from a pipe ("Could not open file /dev/stdin"): JSON goes via a file.
const scratch = mkdtempSync(join(tmpdir(), 'dplab-kernel-'));

afterAll(() => {
  for (const ns of created) spawnSync('ip', ['netns', 'del', ns]);
  rmSync(scratch, { recursive: true, force: true });
});

/**
 * Models compared without what legitimately differs: the statistic match keeps a probability as
 * a 31-bit fraction, so iptables-save prints back the value the kernel kept (kube-proxy's
 * `0.0010000000` reads back as `0.00100000016`, its 10 decimals as 11). So the structure is
 * compared exactly and each share (and raw probability) to within 1e-6.
 */
const TOLERANCE = 1e-6;
const essence = (m: DataplaneModel) =>
  m.services.map((s) => ({
    ...s,
    frontends: s.frontends.map((f) => ({
      ...f,
      backends: f.backends.map(({ share: _s, detail, ...b }) => ({ ...b, detail: detail?.replace(/^probability \S+$/, 'probability') })),
    })),
  }));
const figures = (m: DataplaneModel) =>
  m.services.flatMap((s) =>
    s.frontends.flatMap((f) => f.backends.flatMap((b) => [b.share, Number(/^probability (\S+)$/.exec(b.detail ?? '')?.[1] ?? 1)])),
  );
function expectSameModel(back: DataplaneModel, original: DataplaneModel): void {
  expect(essence(back)).toEqual(essence(original));
  const a = figures(back);
  const b = figures(original);
  expect(a.length).toBe(b.length);
  const worst = a.reduce((w, x, i) => Math.max(w, Math.abs(x - b[i])), 0);
  expect(worst).toBeLessThan(TOLERANCE);
}

const hasNfacct = spawnSync('sh', ['-c', 'command -v nfacct']).status === 0;
const files = (format: string) => readdirSync(join(DIR, format)).filter((f) => /\.(txt|json)$/.test(f));
const iptablesText = (file: string) => readFileSync(join(DIR, 'iptables-save', file), 'utf8');
/** Rules that match nfacct counters load only once the counters exist, which needs the `nfacct` tool. */
const loadable = (file: string) => hasNfacct || nfacctNames(iptablesText(file)).length === 0;

describe.skipIf(reason !== null)(`real kernel${reason ? ` (skipped: ${reason})` : ''}`, () => {
  it.each(files('iptables-save').filter(loadable))('iptables-restore accepts iptables-save/%s and reads back the same model', (file) => {
    const text = iptablesText(file);
    const ns = freshNamespace();
    // kube-proxy creates its nfacct counters before it writes the rules that match them.
    for (const name of nfacctNames(text)) inNs(ns, ['nfacct', 'add', name]);
    inNs(ns, ['iptables-restore'], text);
    const back = inNs(ns, ['iptables-save']);
    expectSameModel(parse('iptables-save', back), parse('iptables-save', text));
  });

  it.skip.each(files('iptables-save').filter((f) => !loadable(f)))(
    'iptables-save/%s (skipped: it matches nfacct counters and `nfacct` is missing; apt-get install nfacct)',
    () => {},
  );

  it.each(files('nft-json'))('nft -j -f accepts nft-json/%s and reads back the same model', (file) => {
    const text = readFileSync(join(DIR, 'nft-json', file), 'utf8');
    const ns = freshNamespace();
    const path = join(scratch, file);
    writeFileSync(path, loadableNftJson(text));
    inNs(ns, ['nft', '-j', '-f', path]);
    const back = inNs(ns, ['nft', '-j', 'list', 'table', 'ip', 'kube-proxy']);
    expectSameModel(parse('nft-json', back), parse('nft-json', text));
  });

  it.each(files('nft-json'))('nft -f of the source of nft-json/%s gives that fixture', (file) => {
    const source = readFileSync(join(DIR, 'nft-json', 'src', file.replace(/\.json$/, '.nft')), 'utf8');
    const ns = freshNamespace();
    inNs(ns, ['nft', '-f', '-'], loadableNftScript(source));
    const back = inNs(ns, ['nft', '-j', 'list', 'table', 'ip', 'kube-proxy']);
    expectSameModel(parse('nft-json', back), parse('nft-json', readFileSync(join(DIR, 'nft-json', file), 'utf8')));
  });
});
