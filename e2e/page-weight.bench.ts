/**
 * `npm run bench:pages`: how much JavaScript each kind of page loads, gzipped, measured in
 * Chromium after the page settled (every script response, however it was loaded), beside a
 * bare Starlight page built from the same packages (the limit for a lesson page) and xterm.js's
 * own chunk (the floor of a terminal page). Run after a build (`npm run build`); figures go
 * through test/bench/lib/report.ts (`report('page-weight', rows)`). Not a test: nothing here
 * asserts.
 */
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { launchBrowser, startCourse, type Browser } from './harness.ts';
import { createStaticHandler } from '../scripts/server/static.ts';
import { projectRoot } from '../scripts/base/paths.ts';
import { report, benchDir, type BenchRow } from '../test/bench/lib/report.ts';
import { run } from '../scripts/base/exec.ts';
import { lessonDiagrams } from '../scripts/catalogue/diagrams.ts';

const LESSONS = [...new Set(lessonDiagrams().map((d) => d.file.replace(/^.*\/lessons\/(.*)\.mdx$/, '$1')))];
const KB = 1024;

interface Weight {
  files: { url: string; bytes: number; gzip: number }[];
  gzip: number;
}

async function measure(browser: Browser, url: string): Promise<Weight> {
  const page = await browser.context.newPage();
  const files: Weight['files'] = [];
  const pending: Promise<void>[] = [];
  page.on('response', (res) => {
    if (res.request().resourceType() !== 'script') return;
    pending.push(
      res.body().then(
        (body) => void files.push({ url: res.url(), bytes: body.length, gzip: gzipSync(body).length }),
        () => undefined, // redirected or aborted
      ),
    );
  });
  // Not 'networkidle': a lab page keeps its event stream and terminal socket open.
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForTimeout(3000);
  await Promise.all(pending);
  await page.close();
  return { files, gzip: files.reduce((n, f) => n + f.gzip, 0) };
}

/**
 * A Starlight site with one page and nothing of ours, built once with the project's own
 * packages (inside the project, so they resolve) into .dplab/bench/bare-starlight/.
 */
async function bareStarlight(): Promise<string> {
  const dir = join(benchDir(), 'bare-starlight');
  const dist = join(dir, 'dist');
  if (existsSync(join(dist, 'index.html'))) return dist;
  mkdirSync(join(dir, 'src', 'content', 'docs'), { recursive: true });
  writeFileSync(
    join(dir, 'astro.config.mjs'),
    "import { defineConfig } from 'astro/config';\nimport starlight from '@astrojs/starlight';\nexport default defineConfig({ integrations: [starlight({ title: 'Bare' })] });\n",
  );
  writeFileSync(
    join(dir, 'src', 'content.config.ts'),
    "import { defineCollection } from 'astro:content';\nimport { docsLoader } from '@astrojs/starlight/loaders';\nimport { docsSchema } from '@astrojs/starlight/schema';\nexport const collections = { docs: defineCollection({ loader: docsLoader(), schema: docsSchema() }) };\n",
  );
  writeFileSync(join(dir, 'src', 'content', 'docs', 'index.md'), '---\ntitle: A page\n---\n\nSome text.\n');
  await run(process.execPath, [join(projectRoot, 'node_modules', 'astro', 'astro.js'), 'build'], {
    cwd: dir,
    timeoutMs: 600_000,
    env: { NODE_ENV: 'production' },
  });
  return dist;
}

const bareDist = await bareStarlight();
const bare = createServer((req, res) => void createStaticHandler(bareDist)(req, res));
await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
const bareOrigin = `http://127.0.0.1:${(bare.address() as { port: number }).port}`;

const course = await startCourse();
const browser = await launchBrowser();
try {
  await browser.page.goto(`${course.origin}/#token=${course.token}`);
  const bareWeight = await measure(browser, `${bareOrigin}/`);
  const lessons: [string, Weight][] = [];
  for (const l of LESSONS) lessons.push([l, await measure(browser, `${course.origin}/lessons/${l}/`)]);
  const [heaviestName, heaviest] = lessons.reduce((a, b) => (b[1].gzip > a[1].gzip ? b : a));
  const lab = await measure(browser, `${course.origin}/labs/first-service/`);
  const scratch = await measure(browser, `${course.origin}/terminal/`);
  const landing = await measure(browser, `${course.origin}/`);
  const xterm = lab.files.find((f) => /\/xterm\.[^/]*\.js$/.test(f.url));
  const mermaidOnLessons = lessons.filter(([, w]) => w.files.some((f) => /mermaid|flowDiagram|dagre/i.test(f.url))).map(([n]) => n);

  for (const [name, w] of [['lab page', lab] as const, [`lesson ${heaviestName}`, heaviest] as const]) {
    console.log(`\n${name}: ${w.files.length} scripts`);
    for (const f of [...w.files].sort((a, b) => b.gzip - a.gzip))
      console.log(
        `  ${(f.gzip / KB).toFixed(1).padStart(7)} KB gzip  ${(f.bytes / KB).toFixed(1).padStart(7)} KB  ${new URL(f.url).pathname}`,
      );
  }
  if (mermaidOnLessons.length) console.log(`\nmermaid loaded on: ${mermaidOnLessons.join(', ')}`);
  console.log('');

  const limitBare = { name: 'bare Starlight page', value: bareWeight.gzip / KB };
  const rows: BenchRow[] = [
    {
      measure: `lesson page JS, gzip (heaviest of ${lessons.length}: ${heaviestName})`,
      unit: 'KB',
      ours: heaviest.gzip / KB,
      limit: limitBare,
      goal: { text: '≤ 35 KB, no mermaid', met: heaviest.gzip <= 35 * KB && mermaidOnLessons.length === 0 },
    },
    {
      measure: 'lab page JS, gzip (first-service)',
      unit: 'KB',
      ours: lab.gzip / KB,
      ...(xterm ? { limit: { name: 'xterm.js itself', value: xterm.gzip / KB } } : {}),
      goal: { text: '≤ 110 KB', met: lab.gzip <= 110 * KB },
    },
    { measure: 'scratch terminal page JS, gzip', unit: 'KB', ours: scratch.gzip / KB, limit: limitBare },
    { measure: 'landing page JS, gzip', unit: 'KB', ours: landing.gzip / KB, limit: limitBare },
  ];
  report('page-weight', rows);
} finally {
  await browser.close();
  await course.close();
  bare.close();
}
