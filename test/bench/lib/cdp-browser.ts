/**
 * Chromium driven over the bare DevTools protocol, for measuring pages the way a learner's
 * browser runs them: only the Page, Runtime, Input and Emulation domains are on.
 *
 * Why not Playwright here: it turns on the Network domain for every page, and then Chromium
 * copies every WebSocket frame to the driver, base64 in a protocol event. During the terminal
 * bench's 44 MB flood that is 44 MB encoded on the page's side, sent down the DevTools pipe and
 * parsed by the bench process, on the same two cores as the page: a cost no learner pays, and
 * one the raw-xterm limit (no socket) never paid. Playwright stays the driver of the e2e tests.
 *
 * The page API is the slice the benchmarks use, shaped like Playwright's so they read the same.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { CHROMIUM, CHROMIUM_FLAGS } from '../../../e2e/harness.ts';

type Json = Record<string, unknown>;
interface Reply {
  result?: Json;
  error?: { message: string };
}

export interface BenchPage {
  goto(url: string): Promise<void>;
  /** Runs `fn(arg)` in the page (its source is sent, so it must not close over anything) and returns its JSON value. */
  evaluate<R, A = undefined>(fn: ((arg: A) => R | Promise<R>) | string, arg?: A): Promise<R>;
  /** Polls `fn(arg)` in the page every `polling` ms until it is truthy; returns that value. */
  waitForFunction<R, A = undefined>(
    fn: ((arg: A) => R) | string,
    arg?: A,
    opts?: { timeout?: number; polling?: number },
  ): Promise<NonNullable<R>>;
  waitForTimeout(ms: number): Promise<void>;
  keyboard: {
    /** One key: a character, `Enter`, `Backspace`, or `Control+<letter>`. */
    press(key: string): Promise<void>;
    /** Each character as its own key press. */
    type(text: string): Promise<void>;
  };
  bringToFront(): Promise<void>;
  close(): Promise<void>;
}

export interface BenchBrowser {
  newPage(viewport: { width: number; height: number }): Promise<BenchPage>;
  close(): Promise<void>;
}

/** Named keys the benchmarks press, as Chromium's input pipeline wants them. */
const NAMED: Record<string, { key: string; code: string; keyCode: number; text?: string }> = {
  Enter: { key: 'Enter', code: 'Enter', keyCode: 13, text: '\r' },
  Backspace: { key: 'Backspace', code: 'Backspace', keyCode: 8 },
};

function charKey(ch: string): { key: string; code: string; keyCode: number; text: string } {
  const upper = ch.toUpperCase();
  if (/^[a-z]$/i.test(ch)) return { key: ch, code: `Key${upper}`, keyCode: upper.charCodeAt(0), text: ch };
  if (/^[0-9]$/.test(ch)) return { key: ch, code: `Digit${ch}`, keyCode: ch.charCodeAt(0), text: ch };
  if (ch === ' ') return { key: ' ', code: 'Space', keyCode: 32, text: ' ' };
  // Punctuation arrives through the character event (keypress), which needs no key code.
  return { key: ch, code: '', keyCode: 0, text: ch };
}

export async function launchBenchBrowser(): Promise<BenchBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'dplab-bench-chromium-'));
  // --remote-debugging-pipe: the protocol on fds 3 (to Chromium) and 4 (from it), NUL-separated.
  const proc: ChildProcess = spawn(CHROMIUM, [...CHROMIUM_FLAGS, '--remote-debugging-pipe', `--user-data-dir=${profile}`, 'about:blank'], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr = (stderr + String(d)).slice(-2000)));
  const toChromium = proc.stdio[3] as Writable;
  const fromChromium = proc.stdio[4] as Readable;
  let nextId = 0;
  const waiting = new Map<number, (r: Reply) => void>();
  const listeners = new Set<(m: { method: string; sessionId?: string; params: Json }) => void>();
  let exited: string | null = null;
  let rest = '';
  fromChromium.on('data', (d: Buffer) => {
    const parts = (rest + d.toString('utf8')).split('\0');
    rest = parts.pop()!;
    for (const part of parts) {
      const msg = JSON.parse(part) as { id?: number; method?: string; sessionId?: string; params?: Json } & Reply;
      if (msg.id !== undefined) {
        waiting.get(msg.id)?.(msg);
        waiting.delete(msg.id);
      } else if (msg.method) listeners.forEach((f) => f({ method: msg.method!, sessionId: msg.sessionId, params: msg.params ?? {} }));
    }
  });
  proc.on('exit', (code, signal) => {
    exited = `Chromium exited (${code ?? signal}): ${stderr.trim().slice(-600)}`;
    waiting.forEach((w) => w({ error: { message: exited! } }));
    waiting.clear();
  });

  const send = async (method: string, params: Json = {}, sessionId?: string): Promise<Json> => {
    if (exited) throw new Error(exited);
    const id = ++nextId;
    const reply = await new Promise<Reply>((ok) => {
      waiting.set(id, ok);
      toChromium.write(`${JSON.stringify({ id, method, params, sessionId })}\0`);
    });
    if (reply.error) throw new Error(`${method}: ${reply.error.message}`);
    return reply.result ?? {};
  };
  const nextEvent = (method: string, sessionId: string, ms: number): Promise<void> =>
    new Promise((ok, fail) => {
      const timer = setTimeout(() => {
        listeners.delete(on);
        fail(new Error(`no ${method} within ${ms} ms`));
      }, ms);
      const on = (m: { method: string; sessionId?: string }) => {
        if (m.method !== method || m.sessionId !== sessionId) return;
        clearTimeout(timer);
        listeners.delete(on);
        ok();
      };
      listeners.add(on);
    });

  async function newPage(viewport: { width: number; height: number }): Promise<BenchPage> {
    const { targetId } = (await send('Target.createTarget', { url: 'about:blank' })) as { targetId: string };
    const { sessionId } = (await send('Target.attachToTarget', { targetId, flatten: true })) as { sessionId: string };
    const on = (method: string, params: Json = {}) => send(method, params, sessionId);
    await Promise.all([
      on('Page.enable'),
      on('Runtime.enable'),
      on('Emulation.setDeviceMetricsOverride', { ...viewport, deviceScaleFactor: 1, mobile: false }),
      // Every page behaves as the focused window, as the learner's one tab does.
      on('Emulation.setFocusEmulationEnabled', { enabled: true }),
    ]);
    const evaluate = async <R, A>(fn: ((arg: A) => R | Promise<R>) | string, arg?: A): Promise<R> => {
      // tsx (esbuild keepNames) wraps named inner functions in __name(), which pages do not have.
      const call = typeof fn === 'string' ? fn : `(${fn.toString()})(${arg === undefined ? '' : JSON.stringify(arg)})`;
      const r = (await on('Runtime.evaluate', {
        expression: `(globalThis.__name ??= (f) => f, ${call})`,
        awaitPromise: true,
        returnByValue: true,
      })) as { result: { value?: R }; exceptionDetails?: { exception?: { description?: string }; text: string } };
      if (r.exceptionDetails) throw new Error(r.exceptionDetails.exception?.description ?? r.exceptionDetails.text);
      return r.result.value as R;
    };
    const key = async (k: { key: string; code: string; keyCode: number; text?: string }, modifiers = 0): Promise<void> => {
      const base = { key: k.key, code: k.code, windowsVirtualKeyCode: k.keyCode, modifiers };
      await on('Input.dispatchKeyEvent', {
        type: k.text ? 'keyDown' : 'rawKeyDown',
        ...base,
        ...(k.text ? { text: k.text, unmodifiedText: k.text } : {}),
      });
      await on('Input.dispatchKeyEvent', { type: 'keyUp', ...base });
    };
    return {
      async goto(url) {
        const loaded = nextEvent('Page.loadEventFired', sessionId, 30_000);
        const r = (await on('Page.navigate', { url })) as { errorText?: string };
        if (r.errorText) throw new Error(`${url}: ${r.errorText}`);
        await loaded;
      },
      evaluate,
      async waitForFunction<R, A>(fn: ((arg: A) => R) | string, arg?: A, opts: { timeout?: number; polling?: number } = {}) {
        const predicate = typeof fn === 'string' ? `() => (${fn})` : fn.toString();
        const timeout = opts.timeout ?? 30_000;
        const value = await evaluate<R | null, undefined>(
          `new Promise((ok, fail) => {
            const f = ${predicate}; const arg = ${arg === undefined ? 'undefined' : JSON.stringify(arg)};
            const until = performance.now() + ${timeout};
            const poll = () => {
              const v = f(arg);
              if (v) ok(v);
              else if (performance.now() > until) fail(new Error('waitForFunction: not true within ${timeout} ms'));
              else setTimeout(poll, ${opts.polling ?? 16});
            };
            poll();
          })`,
        );
        return value as NonNullable<R>;
      },
      waitForTimeout: (ms) => new Promise((r) => setTimeout(r, ms)),
      keyboard: {
        async press(k) {
          const ctrl = /^Control\+([a-z])$/i.exec(k);
          if (ctrl) {
            const letter = ctrl[1].toLowerCase();
            await on('Input.dispatchKeyEvent', {
              type: 'rawKeyDown',
              key: 'Control',
              code: 'ControlLeft',
              windowsVirtualKeyCode: 17,
              modifiers: 2,
            });
            await key({ key: letter, code: `Key${letter.toUpperCase()}`, keyCode: letter.toUpperCase().charCodeAt(0) }, 2);
            await on('Input.dispatchKeyEvent', { type: 'keyUp', key: 'Control', code: 'ControlLeft', windowsVirtualKeyCode: 17 });
            return;
          }
          const named = NAMED[k];
          if (!named && [...k].length !== 1) throw new Error(`press: no key "${k}"`);
          await key(named ?? charKey(k));
        },
        async type(text) {
          for (const ch of text) await key(charKey(ch));
        },
      },
      bringToFront: async () => {
        await on('Page.bringToFront');
      },
      close: async () => {
        await send('Target.closeTarget', { targetId });
      },
    };
  }

  // The first protocol reply says the pipe is up.
  await send('Browser.getVersion');
  return {
    newPage,
    async close() {
      if (!exited) {
        const gone = new Promise((r) => proc.once('exit', r));
        await send('Browser.close').catch(() => undefined);
        const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
        await gone;
        clearTimeout(timer);
      }
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
