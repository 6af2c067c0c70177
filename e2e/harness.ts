/**
 * Shared set-up for browser tests: the real runner serving the built course on a free
 * loopback port, and Debian's Chromium driven by playwright-core.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { startServer, type RunningServer, type ServeOptions } from '../scripts/server/http.ts';
import { distDir } from '../scripts/base/paths.ts';
import { kubeconfigPath, type Mode } from '../scripts/catalogue/modes.ts';
import { applyEnv, useDoubles, type Doubles, type Scenario } from '../test/fixtures/doubles.ts';

export const CHROMIUM = process.env.DPLAB_CHROMIUM ?? '/usr/bin/chromium';
/** Browser tests run wherever Chromium is installed (.ci/run installs it). */
export const hasChromium = existsSync(CHROMIUM);
/** Added to a browser suite's name, so a run without Chromium says why its tests were skipped (and a run with it does not). */
export const chromiumNote = hasChromium ? '' : ' (skipped: /usr/bin/chromium is not installed)';

/** Every browser test's and benchmark's Chromium runs with these (test/bench/lib/cdp-browser.ts too). */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Course {
  server: RunningServer;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  token: string;
  close(): Promise<void>;
}

/** A fresh random token per course, as strong as the runner's own (it refuses weaker ones). */
export async function startCourse(
  token = `e2e-${randomBytes(16).toString('hex')}`,
  opts: Pick<ServeOptions, 'maxTerminals' | 'limits' | 'services' | 'warm'> = {},
): Promise<Course> {
  // As `dplab serve` runs it: lab terminals say why kubectl will fail when the cluster is not ready.
  // Starting the next lab's cluster ahead is off unless a test asks for it (e2e/warm-next.test.ts):
  // other tests' doubles script one cluster, and their command lines stay theirs.
  const server = await startServer({ port: 0, portExplicit: true, token, siteDir: distDir, terminalNotice: true, warm: false, ...opts });
  return { server, origin: `http://127.0.0.1:${server.port}`, token, close: () => server.close() };
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

export interface LaunchOptions {
  /** Lets a test inject a checker (axe-core) into pages whose CSP would refuse it. */
  bypassCSP?: boolean;
  /** Added to Chromium's environment, e.g. a `FONTCONFIG_FILE` that gives it one font set (e2e/font-sets.ts). */
  env?: Record<string, string>;
}

export async function launchBrowser(opts: LaunchOptions = {}): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'dplab-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1400, height: 900 },
    bypassCSP: opts.bypassCSP ?? false,
    ...(opts.env ? { env: { ...(process.env as Record<string, string>), ...opts.env } } : {}),
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Open a page of the course signed in, the way a learner does: through the printed link, whose
 * token is in the fragment; the page keeps it in its origin's storage for later pages.
 */
export async function openSignedIn(page: Page, course: Course, path: string): Promise<void> {
  // From the same page, a link that differs only after `#` would not load the page again.
  if (new URL(page.url()).pathname === path) await page.goto('about:blank');
  await page.goto(`${course.origin}${path}#token=${course.token}`);
}

/** fetch() from inside the page with the stored token, as the page's own code does. */
export function fetchStatusInPage(page: Page, path: string): Promise<number> {
  return page.evaluate(
    async (p) => (await fetch(p, { headers: { authorization: `Bearer ${localStorage.getItem('dplab.token')}` } })).status,
    path,
  );
}

/** The runner over the cluster test doubles, with Chromium: what every browser test of a lab or cluster page starts from. */
export interface Stage {
  course: Course;
  browser: Browser;
  doubles: Doubles;
  close(): Promise<void>;
}

/**
 * Puts the doubles first on PATH (the runner runs in this process, so its kind/kubectl/docker
 * calls hit them), optionally writes a kubeconfig so the mode's cluster counts as created, then
 * starts the runner and Chromium. `close()` undoes all of it.
 */
export async function stageWithDoubles(
  scenario: Scenario,
  opts: { env?: Record<string, string>; clusterOf?: Mode; browser?: LaunchOptions; course?: Parameters<typeof startCourse>[1] } = {},
): Promise<Stage> {
  const doubles = useDoubles(scenario);
  const restore = applyEnv({ ...doubles.env, ...opts.env });
  if (opts.clusterOf) {
    mkdirSync(dirname(kubeconfigPath(opts.clusterOf)), { recursive: true });
    writeFileSync(kubeconfigPath(opts.clusterOf), 'apiVersion: v1\nkind: Config\n');
  }
  const course = await startCourse(undefined, opts.course);
  const browser = await launchBrowser(opts.browser);
  return {
    course,
    browser,
    doubles,
    async close() {
      await browser.close();
      await course.close();
      restore();
      doubles.cleanup();
    },
  };
}
