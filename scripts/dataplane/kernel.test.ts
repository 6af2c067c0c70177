// Real kernel tier: every iptables and nft fixture is loaded into a fresh network namespace and
// read back; the readback must parse to the same model, so the fixtures are rules the kernel takes.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, type DataplaneModel } from './index.ts';
import { loadableNftJson, loadableNftScript, nfacctNames, whyNot } from './netns-lab.ts';

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
 * Models compared without what legitimately differs: kube-proxy writes `--probability 0.5000000000`
 * (10 decimals) and iptables-save prints the kernel's value back with 11, so the raw figure is
 * compared as a number.
 */
const essence = (m: DataplaneModel) =>
  m.services.map((s) => ({
    ...s,
    frontends: s.frontends.map((f) => ({
      ...f,
      backends: f.backends.map((b) => ({ ...b, detail: b.detail?.replace(/^probability (\S+)$/, (_, p: string) => `probability ${Number(p)}`) })),
    })),
  }));

const hasNfacct = spawnSync('sh', ['-c', 'command -v nfacct']).status === 0;
const files = (format: string) => readdirSync(join(DIR, format)).filter((f) => /\.(txt|json)$/.test(f));

describe.skipIf(reason !== null)(`real kernel${reason ? ` (skipped: ${reason})` : ''}`, () => {
  it.each(files('iptables-save'))('iptables-restore accepts iptables-save/%s and reads back the same model', (file) => {
    const text = readFileSync(join(DIR, 'iptables-save', file), 'utf8');
    const counters = nfacctNames(text);
    // Skipping is said out loud: the rules name nfacct counters and the tool to create them is absent.
    if (counters.length && !hasNfacct) {
      console.warn(`kernel: ${file} skipped: it matches nfacct counters and \`nfacct\` is missing (apt-get install nfacct)`);
      return;
    }
    const ns = freshNamespace();
    for (const name of counters) inNs(ns, ['nfacct', 'add', name]);
    inNs(ns, ['iptables-restore'], text);
    const back = inNs(ns, ['iptables-save']);
    expect(essence(parse('iptables-save', back))).toEqual(essence(parse('iptables-save', text)));
  });

  it.each(files('nft-json'))('nft -j -f accepts nft-json/%s and reads back the same model', (file) => {
    const text = readFileSync(join(DIR, 'nft-json', file), 'utf8');
    const ns = freshNamespace();
    const path = join(scratch, file);
    writeFileSync(path, loadableNftJson(text));
    inNs(ns, ['nft', '-j', '-f', path]);
    const back = inNs(ns, ['nft', '-j', 'list', 'table', 'ip', 'kube-proxy']);
    expect(essence(parse('nft-json', back))).toEqual(essence(parse('nft-json', text)));
  });

  it.each(files('nft-json'))('nft -f of the source of nft-json/%s gives that fixture', (file) => {
    const source = readFileSync(join(DIR, 'nft-json', 'src', file.replace(/\.json$/, '.nft')), 'utf8');
    const ns = freshNamespace();
    inNs(ns, ['nft', '-f', '-'], loadableNftScript(source));
    const back = inNs(ns, ['nft', '-j', 'list', 'table', 'ip', 'kube-proxy']);
    expect(essence(parse('nft-json', back))).toEqual(essence(parse('nft-json', readFileSync(join(DIR, 'nft-json', file), 'utf8'))));
  });
});
