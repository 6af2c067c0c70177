/**
 * The terminal, side by side with a peer and the limits, in one run on one machine:
 * `dplab bench terminal [rounds]`.
 *
 *   us       `dplab serve` (as its own process) and the course's /terminal/ page
 *   peer     wetty (WETTY_VERSION), installed with npm into a temporary folder at bench time
 *   limits   raw xterm.js in a local page fed the same bytes with no socket (bulk, echo), and
 *            the same page fed by the least a web terminal does (a pty's reads sent as they come
 *            over a bare WebSocket: bulk through a pty),
 *            node-pty alone in this process (bytes/s straight from the pty, echo from the pty)
 *
 * Every browser figure comes from the same Chromium (bench/lib/cdp-browser.ts); the targets take turns
 * within each round (interleaved), and the table shows medians over rounds (throughput) or
 * percentiles over every sample of every round (latency). Where wetty cannot be installed or
 * started, the reason is printed and its column stays empty: the run says so, it does not guess.
 * Asserts nothing; the goals' "met" column is a reading, not a test.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import * as pty from '@lydell/node-pty';
import { WebSocketServer } from 'ws';
import { mustOpen, openShell, type Shell } from '../fixtures/terminal-client.ts';
import { startRunnerChild, type RunnerChild } from '../fixtures/runner-child.ts';
import { distDir, projectRoot } from '../../scripts/base/paths.ts';
import { buildIsStale, buildSite } from '../../scripts/base/site-build.ts';
import { launchBenchBrowser, type BenchBrowser, type BenchPage as Page } from './lib/cdp-browser.ts';
import { report, type BenchRow } from './lib/report.ts';
import { freePort } from '../../scripts/base/free-port.ts';

const WETTY_VERSION = '3.2.0';
const ROUNDS = Number(process.argv[2] ?? 3);
const SEQ_N = 5_000_000;
const KEY_SAMPLES = Number(process.env.DPLAB_BENCH_KEYS ?? 60);
const NODE_ECHO_SAMPLES = 200;
const MANY_TERMINALS = 50;
/** Each of the many terminals types at this pace (keys a second), at its own random phase. */
const MANY_KEYS_PER_SECOND = 8;
const MANY_SECONDS = 5;
const CTRL_C_SAMPLES = 10;
/** One frame of the headless display's 60 Hz clock. */
const DISPLAY_FRAME_MS = 1000 / 60;
/** Every page's window, as the course's e2e tests use. */
const VIEWPORT = { width: 1400, height: 900 };
/** The prompt every shell gets (PS1 with \101 = "A", so the typed command never matches it). */
const PROMPT = 'QAZ> ';
const SET_PROMPT = "PS1='Q\\101Z> '\r";

// ---------- figures ----------

function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN;
}
const median = (xs: readonly number[]) => quantile(xs, 0.5);

/** Bytes of `seq 1 N` as the pty sends them (onlcr: every newline becomes CRLF). */
function seqBytes(n: number): number {
  let total = 0;
  for (let digits = 1, lo = 1; lo <= n; digits++, lo *= 10) total += (Math.min(n, lo * 10 - 1) - lo + 1) * (digits + 2);
  return total;
}
const SEQ_BYTES = seqBytes(SEQ_N);

// ---------- the peer: wetty in a temporary folder ----------

interface Peer {
  origin: string;
  page: string;
  dir: string;
  proc: ChildProcess;
  stop(): void;
}

/** DPLAB_BENCH_WETTY_DIR: a folder where wetty@WETTY_VERSION was installed by an earlier run (kept; saves the install). */
async function startWetty(): Promise<Peer | { unavailable: string }> {
  const reuse = process.env.DPLAB_BENCH_WETTY_DIR;
  const dir = reuse ?? mkdtempSync(join(tmpdir(), 'dplab-bench-wetty-'));
  const keep = reuse !== undefined;
  if (!keep) await installWetty(dir);
  return launchWetty(dir, keep);
}

async function installWetty(dir: string): Promise<void> {
  // npm 11 asks for install scripts to be allowed by name (allowScripts); node-pty's builds its addon.
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ private: true, allowScripts: { 'node-pty': true } })}\n`);
  process.stdout.write(`installing wetty@${WETTY_VERSION} into ${dir} (npm; builds node-pty) …\n`);
  const npm = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', `wetty@${WETTY_VERSION}`], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 15 * 60_000,
  });
  if (npm.status !== 0) {
    throw new Error(
      `npm install wetty@${WETTY_VERSION} failed (${npm.status ?? npm.signal}): ${(npm.stderr || npm.stdout).trim().slice(-600)}`,
    );
  }
}

async function launchWetty(dir: string, keep: boolean): Promise<Peer | { unavailable: string }> {
  const port = await freePort();
  const shell = join(dir, 'shell.sh');
  // The same shell as ours under the bench (runner-child sets DPLAB_SHELL_NORC): bash, no rc files.
  writeFileSync(shell, '#!/bin/sh\nexec bash --norc --noprofile\n', { mode: 0o755 });
  const proc = spawn(
    process.execPath,
    [join(dir, 'node_modules', 'wetty', 'build', 'main.js'), '--host', '127.0.0.1', '--port', String(port), '--command', shell],
    {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let log = '';
  proc.stdout!.on('data', (d) => (log += d));
  proc.stderr!.on('data', (d) => (log += d));
  const origin = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) return { unavailable: `wetty exited (${proc.exitCode}): ${log.trim().slice(-600)}` };
    try {
      if ((await fetch(`${origin}/`)).ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  if (Date.now() >= deadline) {
    proc.kill('SIGKILL');
    return { unavailable: `wetty did not answer on ${origin}/ within 20 s: ${log.trim().slice(-600)}` };
  }
  return {
    origin,
    page: `${origin}/`,
    dir,
    proc,
    stop: () => {
      proc.kill('SIGTERM');
      if (!keep) rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---------- the limit: raw xterm.js in a local page ----------

/**
 * The raw page's server. Its WebSocket (`/seq`) is the least any web terminal does: it runs
 * `seq 1 SEQ_N` on a pty and sends every read as a binary message, with no protocol, batching
 * or flow control; the page writes each into xterm. With the pty's own work on the same cores,
 * it is the limit of bulk output through a pty, where raw xterm alone has no pty at all.
 */
function rawXtermServer(): Promise<{ server: Server; url: string; seqUrl: string }> {
  const req = createRequire(join(projectRoot, 'package.json'));
  const lib = dirname(req.resolve('@xterm/xterm'));
  const js = readFileSync(join(lib, 'xterm.js'));
  const css = readFileSync(join(lib, '..', 'css', 'xterm.css'));
  // The same DOM renderer and grid as the course page, and no socket: bytes go straight into xterm.
  const html = `<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="/xterm.css">
<style>html,body{margin:0;background:#0d1117}#t{width:1000px}</style></head>
<body><div id="t"></div><script src="/xterm.js"></script><script>
const term = new Terminal({ scrollback: 5000, cols: 120, rows: 30, cursorBlink: false });
term.open(document.getElementById('t'));
term.onData((d) => term.write(d === '\x7f' ? '\b \b' : d));
term.focus();
window.benchTerm = term;
</script></body></html>`;
  const server = createServer((rq, rs) => {
    const body = rq.url === '/xterm.js' ? js : rq.url === '/xterm.css' ? css : Buffer.from(html);
    rs.writeHead(200, { 'content-type': rq.url === '/xterm.js' ? 'text/javascript' : rq.url === '/xterm.css' ? 'text/css' : 'text/html' });
    rs.end(body);
  });
  const sockets = new WebSocketServer({ server, path: '/seq' });
  sockets.on('connection', (ws) => {
    const p = pty.spawn('seq', ['1', String(SEQ_N)], { name: 'xterm-256color', cols: 93, rows: 37, cwd: tmpdir(), encoding: null });
    p.onData((d) => ws.send(d as unknown as Buffer));
    // Reads still in flight after the exit arrive on the next turns.
    p.onExit(() => setTimeout(() => ws.close(), 50));
  });
  return new Promise((ok) =>
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      ok({ server, url: `http://127.0.0.1:${port}/`, seqUrl: `ws://127.0.0.1:${port}/seq` });
    }),
  );
}

function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, fail) => (timer = setTimeout(() => fail(new Error(`no ${what} within ${ms} ms`)), ms)));
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

// ---------- in the page ----------

type Target = 'us' | 'wetty' | 'xterm';
/** How each page exposes its xterm Terminal. */
const TERM_EXPR: Record<Target, string> = {
  us: `document.querySelector('dplab-terminal').term`,
  wetty: `window.wetty_term`,
  xterm: `window.benchTerm`,
};

/** The slice of xterm's Terminal the probes use. */
interface BenchTerm {
  rows: number;
  buffer: {
    active: {
      baseY: number;
      cursorX: number;
      cursorY: number;
      getLine(y: number): { translateToString(trim: boolean): string } | undefined;
    };
  };
  onWriteParsed(f: () => void): { dispose(): void };
  onRender(f: () => void): { dispose(): void };
}

/** Waits for the page's terminal and keeps it as window.benchTermRef (a string expression: no eval under the page's CSP). */
async function waitForTerm(page: Page, t: Target): Promise<void> {
  await page.waitForFunction(`!!(${TERM_EXPR[t]}) && !!(${TERM_EXPR[t]}).buffer`, undefined, { timeout: 30_000 });
  await page.evaluate(`void (window.benchTermRef = ${TERM_EXPR[t]})`);
  // tsx (esbuild keepNames) wraps named inner functions in __name(), which pages do not have.
  await page.evaluate('void (window.__name = (f) => f)');
}

/** Which renderer the page ended up with (a canvas means WebGL). */
function rendererOf(page: Page): Promise<string> {
  return page.evaluate(() => (document.querySelector('.xterm canvas') ? 'webgl/canvas' : 'dom'));
}

interface Grid {
  cols: number;
  rows: number;
}

function gridOf(page: Page): Promise<Grid> {
  return page.evaluate(() => {
    const term = (window as unknown as { benchTermRef: { cols: number; rows: number } }).benchTermRef;
    return { cols: term.cols, rows: term.rows };
  });
}

/**
 * Gives a page's terminal the grid of another: the DOM renderer draws every row each frame, so
 * a terminal with fewer rows paints a flood for less (the raw page's own 120×30 drew 19 % fewer
 * rows than the course page's 93×37).
 */
async function matchGrid(page: Page, want: Grid): Promise<Grid> {
  await page.evaluate(
    ({ cols, rows }) => (window as unknown as { benchTermRef: { resize(c: number, r: number): void } }).benchTermRef.resize(cols, rows),
    want,
  );
  // The size the terminal has once xterm has taken the resize (a few ms; 2 s is a failure).
  await page
    .waitForFunction(
      ({ cols, rows }) => {
        const term = (window as unknown as { benchTermRef: { cols: number; rows: number } }).benchTermRef;
        return term.cols === cols && term.rows === rows;
      },
      want,
      { timeout: 2_000, polling: 10 },
    )
    .catch(() => undefined);
  return gridOf(page);
}

/** Waits until the visible buffer holds `text` on some line. */
async function waitForScreen(page: Page, text: string, ms = 20_000): Promise<void> {
  await page.waitForFunction(
    (want) => {
      const term = (window as unknown as { benchTermRef: BenchTerm }).benchTermRef;
      const b = term.buffer.active;
      for (let y = b.baseY; y < b.baseY + term.rows; y++) if (b.getLine(y)?.translateToString(true).includes(want)) return true;
      return false;
    },
    text,
    { timeout: ms, polling: 50 },
  );
}

/** Installs the probes once per page: keydown time, first buffer change after it, first render after that. */
async function installProbes(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as Record<string, unknown>;
    const term = w.benchTermRef as BenchTerm;
    const probe = { t0: 0, tBuf: 0, tPaint: 0, x0: 0, armed: false };
    w.benchProbe = probe;
    window.addEventListener(
      'keydown',
      () => {
        if (probe.armed && probe.t0 === 0) probe.t0 = performance.now();
      },
      true,
    );
    term.onWriteParsed(() => {
      if (probe.armed && probe.t0 && !probe.tBuf && term.buffer.active.cursorX === probe.x0 + 1) probe.tBuf = performance.now();
    });
    term.onRender(() => {
      if (probe.armed && probe.tBuf && !probe.tPaint) probe.tPaint = performance.now();
    });
  });
}

interface KeySample {
  buffer: number;
  paint: number;
}

/** One keystroke: press "x", time its echo into the buffer and onto the screen; then erase it. */
async function keystroke(page: Page): Promise<KeySample> {
  await page.evaluate(() => {
    const w = window as unknown as {
      benchProbe: Record<string, number | boolean>;
      benchTermRef: { buffer: { active: { cursorX: number } } };
    };
    Object.assign(w.benchProbe, { t0: 0, tBuf: 0, tPaint: 0, x0: w.benchTermRef.buffer.active.cursorX, armed: true });
  });
  await page.keyboard.press('x');
  const s = await page.waitForFunction(
    () => {
      const p = (window as unknown as { benchProbe: { t0: number; tBuf: number; tPaint: number } }).benchProbe;
      return p.tPaint ? { buffer: p.tBuf - p.t0, paint: p.tPaint - p.t0 } : null;
    },
    undefined,
    { timeout: 10_000, polling: 5 },
  );
  await page.evaluate(() => ((window as unknown as { benchProbe: { armed: boolean } }).benchProbe.armed = false));
  const x = await page.evaluate(
    () => (window as unknown as { benchTermRef: { buffer: { active: { cursorX: number } } } }).benchTermRef.buffer.active.cursorX,
  );
  await page.keyboard.press('Backspace');
  await page.waitForFunction(
    (want) =>
      (window as unknown as { benchTermRef: { buffer: { active: { cursorX: number } } } }).benchTermRef.buffer.active.cursorX === want,
    x - 1,
    { timeout: 10_000 },
  );
  // Let the erase settle and the page go idle, as between a learner's keys; then a random part
  // of a display frame, since a person's key lands at any point of the frame clock. (A fixed
  // pause put every key at about the same point, and that point moved p50 from run to run.)
  await page.waitForTimeout(30 + Math.random() * DISPLAY_FRAME_MS);
  return s;
}

/** `seq 1 N` through the shell into the page's xterm: ms from Enter until the end marker is in the buffer. */
async function bulkThroughShell(page: Page): Promise<number> {
  const marker = `BULK-${Math.floor(Math.random() * 1e6)}`;
  await page.keyboard.type(`clear; seq 1 ${SEQ_N}; echo ${marker}-$((1+1))-END`);
  await waitForScreen(page, `${marker}-$((1+1))-END`);
  const done = page.evaluate(
    (want) =>
      new Promise<number>((resolve) => {
        const term = (window as unknown as { benchTermRef: BenchTerm }).benchTermRef;
        let t0 = 0;
        const onKey = (e: KeyboardEvent) => {
          if (e.key === 'Enter' && !t0) t0 = performance.now();
        };
        window.addEventListener('keydown', onKey, true);
        const sub = term.onWriteParsed(() => {
          const b = term.buffer.active;
          const y = b.baseY + b.cursorY;
          for (let i = y; i >= Math.max(0, y - 2); i--) {
            if (b.getLine(i)?.translateToString(true).includes(want)) {
              sub.dispose();
              window.removeEventListener('keydown', onKey, true);
              resolve(performance.now() - t0);
              return;
            }
          }
        });
      }),
    `${marker}-2-END`,
  );
  await page.waitForTimeout(50);
  await page.keyboard.press('Enter');
  const ms = await within(done, 120_000, `the end marker after seq 1 ${SEQ_N}`);
  await waitForScreen(page, PROMPT);
  return ms;
}

/** The same bytes written straight into xterm, with write callbacks holding ≤ 1 MiB in flight. */
function bulkRaw(page: Page): Promise<number> {
  return page.evaluate(async (n) => {
    const term = (window as unknown as { benchTerm: { write(d: Uint8Array, cb: () => void): void; reset(): void } }).benchTerm;
    term.reset();
    const enc = new TextEncoder();
    const chunks: Uint8Array[] = [];
    let acc = '';
    for (let i = 1; i <= n; i++) {
      acc += `${i}\r\n`;
      if (acc.length >= 64 * 1024) {
        chunks.push(enc.encode(acc));
        acc = '';
      }
    }
    if (acc) chunks.push(enc.encode(acc));
    const t0 = performance.now();
    await new Promise<void>((resolve) => {
      let next = 0;
      let inFlight = 0;
      const pump = () => {
        while (next < chunks.length && inFlight < 1024 * 1024) {
          const c = chunks[next++];
          inFlight += c.length;
          term.write(c, () => {
            inFlight -= c.length;
            if (next === chunks.length && inFlight === 0) resolve();
            else pump();
          });
        }
      };
      pump();
    });
    return performance.now() - t0;
  }, SEQ_N);
}

/** `seq 1 N` from the bare socket into the raw page's xterm: ms from the socket opening until every byte is parsed. */
function bulkBareSocket(page: Page, url: string): Promise<number> {
  return page.evaluate(
    (seqUrl) =>
      new Promise<number>((resolve, reject) => {
        const term = (window as unknown as { benchTerm: { write(d: Uint8Array, cb: () => void): void; reset(): void } }).benchTerm;
        term.reset();
        const ws = new WebSocket(seqUrl);
        ws.binaryType = 'arraybuffer';
        let t0 = 0;
        let parsing = 0;
        let closed = false;
        const end = () => resolve(performance.now() - t0);
        ws.onopen = () => (t0 = performance.now());
        ws.onmessage = (ev) => {
          parsing++;
          term.write(new Uint8Array(ev.data as ArrayBuffer), () => {
            if (--parsing === 0 && closed) end();
          });
        };
        ws.onclose = () => {
          closed = true;
          if (parsing === 0) end();
        };
        ws.onerror = () => reject(new Error(`the bare socket ${seqUrl} failed`));
      }),
    url,
  );
}

/** `yes` in the page's terminal, then Ctrl-C pressed: ms until the prompt is on the screen (everything already sent is drawn first). */
async function ctrlCInPage(page: Page): Promise<number> {
  await page.keyboard.type('yes');
  await page.keyboard.press('Enter');
  // The flood is on when the line above the cursor is a lone "y".
  await page.waitForFunction(
    () => {
      const b = (window as unknown as { benchTermRef: BenchTerm }).benchTermRef.buffer.active;
      return b.getLine(b.baseY + b.cursorY - 1)?.translateToString(true) === 'y';
    },
    undefined,
    { timeout: 20_000, polling: 50 },
  );
  await page.waitForTimeout(300);
  const done = page.evaluate(
    (prompt) =>
      new Promise<number>((resolve) => {
        const term = (window as unknown as { benchTermRef: BenchTerm }).benchTermRef;
        let t0 = 0;
        window.addEventListener('keydown', () => (t0 ||= performance.now()), { capture: true, once: true });
        const sub = term.onWriteParsed(() => {
          const b = term.buffer.active;
          if (
            t0 &&
            b
              .getLine(b.baseY + b.cursorY)
              ?.translateToString(true)
              .startsWith(prompt.trimEnd())
          ) {
            sub.dispose();
            resolve(performance.now() - t0);
          }
        });
      }),
    PROMPT,
  );
  await page.waitForTimeout(50);
  await page.keyboard.press('Control+C');
  const ms = await within(done, 60_000, 'the prompt after Ctrl-C');
  await page.keyboard.type('clear');
  await page.keyboard.press('Enter');
  await waitForScreen(page, PROMPT);
  return ms;
}

/** The page's display frame interval: the median gap between animation frames (what a paint waits for, at most). */
function frameInterval(page: Page): Promise<number> {
  return page.evaluate(
    () =>
      new Promise<number>((resolve) => {
        const ts: number[] = [];
        const step = (t: number) => {
          ts.push(t);
          if (ts.length < 61) requestAnimationFrame(step);
          else {
            const gaps = ts.slice(1).map((x, i) => x - ts[i]);
            gaps.sort((a, b) => a - b);
            resolve(gaps[gaps.length >> 1]);
          }
        };
        requestAnimationFrame(step);
      }),
  );
}

// ---------- Node clients ----------

interface NodeTerm {
  /** Calls `f` with every piece of output as it arrives; returns the unsubscribe. */
  onOutput(f: (piece: string) => void): () => void;
  type(s: string): void;
  waitFor(text: string, ms?: number): Promise<void>;
  close(): void;
}

async function ourShell(r: RunnerChild): Promise<Shell> {
  const shell = mustOpen(await openShell(r.port, { authorization: `Bearer ${r.token}`, origin: r.origin, host: `127.0.0.1:${r.port}` }));
  shell.autoAck = true;
  await shell.waitFor('"type":"ready"');
  shell.type(SET_PROMPT);
  await shell.waitFor(PROMPT, 10_000);
  return shell;
}

/** A socket.io client of wetty's own version, from its folder (wetty speaks socket.io, not a bare WebSocket). */
async function wettyShell(peer: Peer): Promise<NodeTerm> {
  const req = createRequire(join(peer.dir, 'package.json'));
  const { io } = (await import(pathToFileURL(req.resolve('socket.io-client')).href)) as {
    io: (url: string, o: object) => { on(e: string, f: (d: unknown) => void): void; emit(e: string, d: unknown): void; close(): void };
  };
  const sock = io(peer.origin, { path: '/socket.io', transports: ['websocket'], extraHeaders: { referer: `${peer.origin}/` } });
  let text = '';
  let received = 0;
  const waiters = new Set<() => void>();
  const listeners = new Set<(piece: string) => void>();
  sock.on('data', (d) => {
    const s = String(d);
    text += s;
    received += s.length;
    // wetty's own client commits what it wrote; do the same so its flow control does not pause us.
    sock.emit('commit', s.length);
    waiters.forEach((w) => w());
    listeners.forEach((f) => f(s));
  });
  sock.on('login', () => sock.emit('resize', { cols: 80, rows: 24 }));
  const t: NodeTerm = {
    onOutput: (f) => {
      listeners.add(f);
      return () => listeners.delete(f);
    },
    type: (s) => sock.emit('input', s),
    waitFor: (want, ms = 10_000) =>
      new Promise((ok, fail) => {
        let from = 0;
        const check = () => {
          if (text.includes(want, from)) {
            clearTimeout(timer);
            waiters.delete(check);
            ok();
          }
          from = Math.max(0, text.length - want.length);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          fail(new Error(`wetty: timed out waiting for ${JSON.stringify(want)} (${received} chars so far)`));
        }, ms);
        waiters.add(check);
        check();
      }),
    close: () => sock.close(),
  };
  await new Promise((r) => setTimeout(r, 500));
  t.type(SET_PROMPT);
  await t.waitFor(PROMPT, 15_000);
  return t;
}

/**
 * Output that includes `want` (or any output, for null) arrives after this call, seen the moment
 * it arrives (on the client's own output event: a polling wait per terminal would spin the CPU
 * that 50 terminals' shells and the runner need). Only the new pieces are searched: searching
 * the client's whole text made V8 flatten megabytes per message after a flood, and timed that.
 */
function arrives(t: NodeTerm, want: string | null, ms = 10_000): Promise<void> {
  return new Promise<void>((ok, fail) => {
    let tail = '';
    const timer = setTimeout(() => {
      off();
      fail(new Error(`no ${want === null ? 'output' : JSON.stringify(want)} within ${ms} ms`));
    }, ms);
    const off = t.onOutput((piece) => {
      if (want !== null) {
        tail = (tail + piece).slice(-(want.length + piece.length));
        if (!tail.includes(want)) return;
      }
      clearTimeout(timer);
      off();
      ok();
    });
  });
}

/** Keystroke echo as a Node client sees it: send "x", wait for it; send Backspace, wait for the erase. */
async function nodeEcho(t: NodeTerm, samples: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < samples; i++) {
    const echoed = arrives(t, 'x');
    const t0 = performance.now();
    t.type('x');
    await echoed;
    out.push(performance.now() - t0);
    const erased = arrives(t, null);
    t.type('\x7f');
    await erased;
    await new Promise((r) => setTimeout(r, 2));
  }
  return out;
}

/**
 * Many terminals typing as people do: each sends a key MANY_KEYS_PER_SECOND times a second, at a
 * phase of its own, for MANY_SECONDS; every echo's latency is one sample. (A class types at once,
 * but not in the same millisecond: `burst` below is that worst case, for comparison.)
 */
async function pacedEcho(terms: NodeTerm[]): Promise<number[]> {
  const out: number[] = [];
  const period = 1000 / MANY_KEYS_PER_SECOND;
  await Promise.all(
    terms.map(async (t) => {
      await new Promise((r) => setTimeout(r, Math.random() * period));
      const keys = MANY_KEYS_PER_SECOND * MANY_SECONDS;
      for (let i = 0; i < keys; i++) {
        const next = performance.now() + period;
        const echoed = arrives(t, null);
        const t0 = performance.now();
        // Alternate a key and its erase, so the line never grows.
        t.type(i % 2 ? '\x7f' : 'x');
        await echoed;
        out.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
      }
    }),
  );
  return out;
}

/** `yes` floods the terminal; Ctrl-C; ms until the prompt is back. */
async function ctrlC(t: NodeTerm): Promise<number> {
  t.type('yes\r');
  await t.waitFor('y\r\ny\r\ny\r\n');
  await new Promise((r) => setTimeout(r, 300));
  const prompt = arrives(t, PROMPT, 20_000);
  const t0 = performance.now();
  t.type('\x03');
  await prompt;
  return performance.now() - t0;
}

function shellAsNodeTerm(s: Shell): NodeTerm {
  return {
    onOutput: (f) => s.onOutput(f),
    type: (x) => s.type(x),
    waitFor: (w, ms) => s.waitFor(w, ms),
    close: () => s.close(),
  };
}

// ---------- node-pty alone ----------

function ptyAlone(): pty.IPty {
  return pty.spawn('bash', ['--norc', '--noprofile'], {
    name: 'xterm-256color',
    cols: 80,
    rows: 24,
    cwd: tmpdir(),
    env: { ...process.env, PS1: PROMPT },
    encoding: null,
  });
}

async function ptyBulk(): Promise<number> {
  const p = pty.spawn('seq', ['1', String(SEQ_N)], {
    name: 'xterm-256color',
    cols: 80,
    rows: 24,
    cwd: tmpdir(),
    env: process.env as Record<string, string>,
    encoding: null,
  });
  let bytes = 0;
  const t0 = performance.now();
  p.onData((d) => (bytes += (d as unknown as Buffer).length));
  await new Promise<void>((ok) => p.onExit(() => ok()));
  // Data still in flight after exit arrives on the next turns.
  await new Promise((r) => setTimeout(r, 20));
  const ms = performance.now() - t0;
  return bytes / 1e6 / (ms / 1000);
}

async function ptyEcho(samples: number): Promise<number[]> {
  const p = ptyAlone();
  let text = '';
  const listeners = new Set<(piece: string) => void>();
  p.onData((d) => {
    const piece = (d as unknown as Buffer).toString();
    text += piece;
    listeners.forEach((f) => f(piece));
  });
  await new Promise((r) => setTimeout(r, 300));
  const t: NodeTerm = {
    onOutput: (f) => {
      listeners.add(f);
      return () => listeners.delete(f);
    },
    type: (s) => p.write(s),
    waitFor: async (w) => {
      while (!text.includes(w)) await new Promise((r) => setTimeout(r, 1));
    },
    close: () => p.kill(),
  };
  const xs = await nodeEcho(t, samples);
  t.close();
  return xs;
}

/**
 * MANY_TERMINALS shells on one runner: all typing at their own pace, then all pressing a key in
 * the same millisecond, again as soon as the last echo came (the worst case). Run before the
 * browser starts, so Chromium's start-up work is not timed against the runner's.
 */
async function manyTerminals(runner: RunnerChild): Promise<{ paced: number[]; burst: number[] }> {
  process.stdout.write(`${MANY_TERMINALS} terminals\n`);
  const many: Shell[] = [];
  for (let i = 0; i < MANY_TERMINALS; i++) many.push(await ourShell(runner));
  const paced = await pacedEcho(many.map(shellAsNodeTerm));
  const burst: number[] = [];
  for (let i = 0; i < 4; i++) {
    const all = await Promise.all(many.map((s) => nodeEcho(shellAsNodeTerm(s), 5)));
    burst.push(...all.flat());
  }
  many.forEach((s) => s.close());
  // Let fifty shells end before anything else is timed.
  await new Promise((r) => setTimeout(r, 3_000));
  return { paced, burst };
}

// ---------- the run ----------

async function openTarget(b: BenchBrowser, t: Target, url: string): Promise<Page> {
  const page = await b.newPage(VIEWPORT);
  await page.goto(url);
  await waitForTerm(page, t);
  await page.evaluate('void window.benchTermRef.focus()');
  if (t !== 'xterm') {
    await page.waitForTimeout(500);
    await page.keyboard.type(SET_PROMPT.slice(0, -1));
    await page.keyboard.press('Enter');
    await waitForScreen(page, PROMPT);
  }
  await installProbes(page);
  return page;
}

function ratioGoal(text: string, met: boolean): { text: string; met: boolean } {
  return { text, met };
}

async function main(): Promise<void> {
  const stale = buildIsStale();
  if (stale.stale) {
    process.stdout.write(`building the course (${stale.reason}) …\n`);
    await buildSite();
  }
  const peerOrWhy = await startWetty().catch((err: Error) => ({ unavailable: err.message }));
  const peer = 'unavailable' in peerOrWhy ? null : peerOrWhy;
  if (!peer) process.stdout.write(`NO PEER this run: ${(peerOrWhy as { unavailable: string }).unavailable}\n`);
  const runner = await startRunnerChild({ siteDir: distDir, args: ['--max-terminals', String(MANY_TERMINALS + 10)] });
  const raw = await rawXtermServer();
  const many = await manyTerminals(runner).catch(async (err: Error) => {
    raw.server.close();
    peer?.stop();
    await runner.stop();
    throw err;
  });
  const browser = await launchBenchBrowser();
  const figures = {
    bulk: { us: [] as number[], wetty: [] as number[], xterm: [] as number[], bare: [] as number[], pty: [] as number[] },
    key: { us: [] as KeySample[], wetty: [] as KeySample[], xterm: [] as KeySample[] },
    echo: { us: [] as number[], wetty: [] as number[], pty: [] as number[] },
    ctrlC: { us: [] as number[], wetty: [] as number[] },
    pageCtrlC: { us: [] as number[], wetty: [] as number[] },
    many: many.paced,
    burst: many.burst,
    frame: [] as number[],
    renderers: {} as Record<string, string>,
    grids: {} as Record<string, Grid>,
  };
  try {
    // Signed in once: the page keeps the token in its origin's storage.
    const ourUrl = `${runner.origin}/terminal/`;
    const signIn = await browser.newPage(VIEWPORT);
    await signIn.goto(`${ourUrl}#token=${runner.token}`);
    await signIn.waitForFunction(`!!document.querySelector('dplab-terminal[data-state="open"]')`, undefined, { timeout: 30_000 });
    await signIn.close();

    const targets: Array<[Target, string]> = [
      ['us', ourUrl],
      ...(peer ? [['wetty', peer.page] as [Target, string]] : []),
      ['xterm', raw.url],
    ];
    const pages = new Map<Target, Page>();
    for (const [t, url] of targets) {
      pages.set(t, await openTarget(browser, t, url));
      figures.renderers[t] = await rendererOf(pages.get(t)!);
    }
    // Every page draws the grid the course page has at this window size.
    const grid = await gridOf(pages.get('us')!);
    for (const [t] of targets) figures.grids[t] = t === 'us' ? grid : await matchGrid(pages.get(t)!, grid);
    // Echo is measured on shells that only ever echo: a client's text grows by every flood, and
    // reading a long string (V8 flattens it) would be timed with the echo. Each Ctrl-C gets a
    // fresh shell for the same reason.
    const ours = await ourShell(runner);
    const theirs = peer ? await wettyShell(peer) : null;
    const fresh = async (t: 'us' | 'wetty'): Promise<NodeTerm> =>
      t === 'us' ? shellAsNodeTerm(await ourShell(runner)) : wettyShell(peer!);
    const ctrlCFresh = async (t: 'us' | 'wetty'): Promise<number> => {
      const term = await fresh(t);
      try {
        return await ctrlC(term);
      } finally {
        term.close();
      }
    };

    for (let round = 0; round < ROUNDS; round++) {
      process.stdout.write(`round ${round + 1}/${ROUNDS}\n`);
      for (const [t] of targets) {
        const page = pages.get(t)!;
        await page.bringToFront();
        const where = (err: Error) => {
          throw new Error(`${t}: ${err.message}`);
        };
        process.stdout.write(`  ${t}: keystrokes`);
        for (let i = 0; i < KEY_SAMPLES; i++) figures.key[t].push(await keystroke(page).catch(where));
        process.stdout.write(', bulk output');
        const ms = await within(t === 'xterm' ? bulkRaw(page) : bulkThroughShell(page), 180_000, 'bulk output').catch(where);
        process.stdout.write(` ${(SEQ_BYTES / 1e6 / (ms / 1000)).toFixed(1)} MB/s`);
        figures.bulk[t].push(SEQ_BYTES / 1e6 / (ms / 1000));
        if (t !== 'xterm') {
          process.stdout.write(', Ctrl-C');
          figures.pageCtrlC[t].push(await ctrlCInPage(page).catch(where));
        } else {
          const bare = await within(bulkBareSocket(page, raw.seqUrl), 180_000, 'bulk output from the bare socket').catch(where);
          process.stdout.write(`, from a bare pty socket ${(SEQ_BYTES / 1e6 / (bare / 1000)).toFixed(1)} MB/s`);
          figures.bulk.bare.push(SEQ_BYTES / 1e6 / (bare / 1000));
          figures.frame.push(await frameInterval(page));
        }
        process.stdout.write('\n');
      }
      process.stdout.write('  node-pty alone, Node clients, Ctrl-C\n');
      figures.bulk.pty.push(await ptyBulk());
      figures.echo.us.push(...(await nodeEcho(shellAsNodeTerm(ours), NODE_ECHO_SAMPLES / ROUNDS)));
      if (theirs) figures.echo.wetty.push(...(await nodeEcho(theirs, NODE_ECHO_SAMPLES / ROUNDS)));
      figures.echo.pty.push(...(await ptyEcho(NODE_ECHO_SAMPLES / ROUNDS)));
      for (let i = 0; i < CTRL_C_SAMPLES; i++) {
        figures.ctrlC.us.push(await ctrlCFresh('us'));
        if (peer) figures.ctrlC.wetty.push(await ctrlCFresh('wetty'));
      }
    }

    ours.close();
    theirs?.close();
  } finally {
    await browser.close();
    raw.server.close();
    peer?.stop();
    await runner.stop();
  }

  const bulk = (t: keyof typeof figures.bulk) => median(figures.bulk[t]);
  const kq = (t: Target, k: keyof KeySample, q: number) =>
    quantile(
      figures.key[t].map((s) => s[k]),
      q,
    );
  const frameWait = (t: Target, q: number) =>
    quantile(
      figures.key[t].map((s) => s.paint - s.buffer),
      q,
    );
  const wettyOr = (v: number) => (peer ? v : NaN);
  const peerOf = (v: number) => (peer ? { name: 'wetty', value: v } : undefined);
  const noPeer = peer ? '' : ' (no peer this run)';
  const rows: BenchRow[] = [
    {
      measure: `browser bulk output, ${(SEQ_BYTES / 1e6).toFixed(0)} MB seq 1 ${SEQ_N}`,
      unit: 'MB/s',
      ours: bulk('us'),
      peer: peerOf(bulk('wetty')),
      limit: { name: 'raw xterm', value: bulk('xterm') },
      goal: ratioGoal(
        `≥ 0.8 × raw xterm, ahead of wetty${noPeer}`,
        bulk('us') >= 0.8 * bulk('xterm') && !(bulk('us') < wettyOr(bulk('wetty'))),
      ),
    },
    {
      measure: 'the same, against the least a web terminal does (node-pty → bare WebSocket → raw xterm)',
      unit: 'MB/s',
      ours: bulk('us'),
      peer: peerOf(bulk('wetty')),
      limit: { name: 'bare pty socket', value: bulk('bare') },
    },
    { measure: 'pty output, seq 1 5000000, node-pty alone (limit of the server side)', unit: 'MB/s', ours: bulk('pty') },
    ...([0.5, 0.95] as const).map((q) => {
      const v = kq('us', 'paint', q);
      return {
        measure: `keystroke → painted frame, p${q * 100}`,
        unit: 'ms',
        ours: v,
        peer: peerOf(kq('wetty', 'paint', q)),
        limit: { name: 'raw xterm echo', value: kq('xterm', 'paint', q) },
        goal: ratioGoal(`≤ 8 ms and ≤ wetty${noPeer}`, v <= 8 && !(v > wettyOr(kq('wetty', 'paint', q)))),
      };
    }),
    {
      // The part of the paint figure no terminal controls: from its echo in the buffer until the
      // display's next frame draws it. Raw xterm's row is the floor for every page.
      measure: 'echo in the buffer → painted (waiting for the display frame), p95',
      unit: 'ms',
      ours: frameWait('us', 0.95),
      peer: peerOf(frameWait('wetty', 0.95)),
      limit: { name: 'raw xterm echo', value: frameWait('xterm', 0.95) },
    },
    {
      // A paint waits for the next display frame: a key pressed at a random moment waits up to a
      // whole frame interval, so no page paints a keystroke at p95 sooner than about this.
      measure: 'display frame interval (median gap between animation frames, raw xterm page)',
      unit: 'ms',
      ours: median(figures.frame),
    },
    {
      measure: 'keystroke → xterm buffer, p50',
      unit: 'ms',
      ours: kq('us', 'buffer', 0.5),
      peer: peerOf(kq('wetty', 'buffer', 0.5)),
      limit: { name: 'raw xterm echo', value: kq('xterm', 'buffer', 0.5) },
      goal: ratioGoal(`≤ wetty${noPeer}`, !(kq('us', 'buffer', 0.5) > wettyOr(kq('wetty', 'buffer', 0.5)))),
    },
    {
      measure: 'Ctrl-C during yes → prompt, median',
      unit: 'ms',
      ours: median(figures.ctrlC.us),
      peer: peerOf(median(figures.ctrlC.wetty)),
      goal: ratioGoal(`≤ wetty (led 28 vs 191)${noPeer}`, !(median(figures.ctrlC.us) > wettyOr(median(figures.ctrlC.wetty)))),
    },
    {
      measure: 'Ctrl-C during yes in the page → prompt on screen, median',
      unit: 'ms',
      ours: median(figures.pageCtrlC.us),
      peer: peerOf(median(figures.pageCtrlC.wetty)),
      goal: ratioGoal(`≤ wetty${noPeer}`, !(median(figures.pageCtrlC.us) > wettyOr(median(figures.pageCtrlC.wetty)))),
    },
    {
      measure: 'WebSocket echo from a Node client, p50',
      unit: 'ms',
      ours: median(figures.echo.us),
      peer: peerOf(median(figures.echo.wetty)),
      limit: { name: 'node-pty alone', value: median(figures.echo.pty) },
      goal: ratioGoal(`≤ wetty${noPeer}`, !(median(figures.echo.us) > wettyOr(median(figures.echo.wetty)))),
    },
    {
      measure: `${MANY_TERMINALS} terminals echo, each typing ${MANY_KEYS_PER_SECOND} keys/s, p95`,
      unit: 'ms',
      ours: quantile(figures.many, 0.95),
      limit: { name: 'node-pty alone p95', value: quantile(figures.echo.pty, 0.95) },
      goal: ratioGoal('≤ 4 ms', quantile(figures.many, 0.95) <= 4),
    },
    {
      measure: `${MANY_TERMINALS} terminals echo, all keys in the same millisecond (worst case), p95`,
      unit: 'ms',
      ours: quantile(figures.burst, 0.95),
      limit: { name: 'node-pty alone p95', value: quantile(figures.echo.pty, 0.95) },
    },
  ];
  process.stdout.write(
    `renderers: ${Object.entries(figures.renderers)
      .map(([k, v]) => `${k} ${v} ${figures.grids[k]?.cols}×${figures.grids[k]?.rows}`)
      .join(', ')}; ${ROUNDS} rounds, ${KEY_SAMPLES} keystrokes per target per round\n`,
  );
  report('terminal', rows);
}

await main();
