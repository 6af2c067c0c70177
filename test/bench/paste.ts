/**
 * What a large paste costs the other terminals: `dplab bench paste [KiB]` starts `dplab serve`
 * as its own process, measures one terminal's keystroke echo (type a line, see it come back)
 * while idle, then again while another terminal takes a 1 MiB paste of lines at bash's prompt
 * (a heredoc: readline echoes and redraws every line, as when a manifest is pasted). Prints
 * p50/p95 idle (the peer) and during the paste, beside the limit. Asserts nothing.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { mustOpen, openShell, type Shell } from '../fixtures/terminal-client.ts';
import { startRunnerChild, type RunnerChild } from '../fixtures/runner-child.ts';

const PASTE_KIB = Number(process.argv[2] ?? 1024);
const IDLE_SAMPLES = 40;
/** A keystroke echo slower than this is felt as lag. */
const LIMIT_P95_MS = 150;

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

async function shellOf(r: RunnerChild): Promise<Shell> {
  const shell = mustOpen(await openShell(r.port, { authorization: `Bearer ${r.token}`, origin: r.origin, host: `127.0.0.1:${r.port}` }));
  shell.autoAck = true;
  await shell.waitFor('"type":"ready"');
  return shell;
}

async function echoOnce(shell: Shell, i: number): Promise<number> {
  const t0 = performance.now();
  shell.type(`echo E${i}-$((${i}*2))\r`);
  await shell.waitFor(`E${i}-${i * 2}`, 30_000);
  return performance.now() - t0;
}

const site = mkdtempSync(join(tmpdir(), 'dplab-bench-site-'));
writeFileSync(join(site, 'index.html'), '<h1>bench</h1>');
const runner = await startRunnerChild({ siteDir: site });
try {
  const peer = await shellOf(runner);
  const paster = await shellOf(runner);
  const idle: number[] = [];
  for (let i = 0; i < IDLE_SAMPLES; i++) idle.push(await echoOnce(peer, i));

  const lines: string[] = [];
  for (let i = 0, size = 0; size < PASTE_KIB * 1024; i++) {
    const line = `  - name: item-${i} value: ${'x'.repeat(48)}`;
    lines.push(line);
    size += line.length + 1;
  }
  const t0 = performance.now();
  paster.type(`cat > /dev/null <<'EOF'\r${lines.join('\r')}\rEOF\r`);
  paster.type('echo PASTE-$((20+1))-END\r');
  let pasting = true;
  const pasted = paster.waitFor('PASTE-21-END', 600_000).then(() => {
    pasting = false;
    return performance.now() - t0;
  });
  const during: number[] = [];
  for (let i = IDLE_SAMPLES; pasting; i++) {
    during.push(await echoOnce(peer, i));
    await new Promise((r) => setTimeout(r, 20));
  }
  const pasteMs = await pasted;

  idle.sort((a, b) => a - b);
  during.sort((a, b) => a - b);
  const row = (name: string, xs: number[]) =>
    `${name.padEnd(26)}${String(xs.length).padStart(8)}${quantile(xs, 0.5).toFixed(1).padStart(10)}${quantile(xs, 0.95).toFixed(1).padStart(10)}${(xs.at(-1) ?? NaN).toFixed(1).padStart(10)}`;
  console.log(
    `Paste of ${PASTE_KIB} KiB (${lines.length} lines) at bash's prompt: ${(pasteMs / 1000).toFixed(1)} s, ${(PASTE_KIB / 1024 / (pasteMs / 1000)).toFixed(2)} MiB/s`,
  );
  console.log('peer terminal echo          samples   p50 ms    p95 ms    max ms');
  console.log(row('idle (peer)', idle));
  console.log(row('during the paste', during));
  console.log(`${'limit'.padEnd(26)}${''.padStart(8)}${''.padStart(10)}${String(LIMIT_P95_MS).padStart(10)}`);
  console.log(quantile(during, 0.95) <= LIMIT_P95_MS ? 'within the limit' : 'OVER THE LIMIT');
  peer.close();
  paster.close();
} finally {
  await runner.stop();
}
