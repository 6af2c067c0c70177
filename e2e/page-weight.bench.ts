/**
 * Prints how many bytes of JavaScript each kind of page loads (measured in Chromium, after
 * the page settled), so lazy loading (xterm on terminal pages, mermaid where a diagram is
 * drawn) is checked by numbers. Run after a build: `npx tsx e2e/page-weight.bench.ts`.
 */
import { launchBrowser, startCourse } from './harness.ts';

const PAGES = [
  ['landing', '/'],
  ['lesson with diagram', '/lessons/services/'],
  ['scratch terminal', '/terminal/'],
  ['lab page', '/labs/first-service/'],
] as const;

const course = await startCourse();
const browser = await launchBrowser();
try {
  await browser.page.goto(`${course.origin}/#token=${course.token}`);
  console.log('page                    JS files   JS bytes (decoded)   xterm  mermaid');
  for (const [name, path] of PAGES) {
    const page = await browser.context.newPage();
    const js: { url: string; bytes: number }[] = [];
    page.on('response', async (res) => {
      if (res.request().resourceType() !== 'script') return;
      try {
        js.push({ url: res.url(), bytes: (await res.body()).length });
      } catch {
        // redirected or aborted
      }
    });
    await page.goto(`${course.origin}${path}`, { waitUntil: 'networkidle' });
    await page.waitForTimeout(1500);
    const total = js.reduce((n, f) => n + f.bytes, 0);
    const has = (re: RegExp) => (js.some((f) => re.test(f.url)) ? 'yes' : 'no');
    console.log(
      `${name.padEnd(24)}${String(js.length).padStart(8)}   ${String(total).padStart(18)}   ${has(/xterm/i).padStart(5)}  ${has(/mermaid|flowDiagram|dagre/i).padStart(7)}`,
    );
    await page.close();
  }
} finally {
  await browser.close();
  await course.close();
}
