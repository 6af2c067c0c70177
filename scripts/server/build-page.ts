/**
 * While the first build of the course runs, `dplab serve` already listens and answers every
 * page with this one: what is happening, the build's step and pages so far (followed once a
 * second from `/_dplab/build`), and the course itself as soon as the build is done (the page
 * reloads, keeping the link's #token). A failed build shows its message, fix and log tail.
 * The page's one inline script is allowed by its hash, like the course's own.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BuildStatus } from '../base/site-build.ts';
import { inlineScriptHashes, pageHeaders } from './page-policy.ts';

export const BUILD_STATUS_PATH = '/_dplab/build';

const SCRIPT = `
const out = document.getElementById('step');
const fail = document.getElementById('failure');
async function poll() {
  let s;
  try {
    const r = await fetch('${BUILD_STATUS_PATH}', { cache: 'no-store' });
    s = r.ok ? await r.json() : { state: 'done' };
  } catch {
    return setTimeout(poll, 2000);
  }
  if (s.state === 'done') return location.reload();
  if (s.state === 'failed') {
    document.title = 'The course could not be built';
    document.getElementById('heading').textContent = 'The course could not be built';
    document.getElementById('intro').textContent = 'The terminal where npm start runs shows the same; the server stops in a moment.';
    document.getElementById('bar').hidden = true;
    out.textContent = s.failure.message;
    fail.hidden = false;
    document.getElementById('fix').textContent = s.failure.fix || '';
    document.getElementById('tail').textContent = s.failure.tail || '';
    document.getElementById('tail').hidden = !s.failure.tail;
    return;
  }
  out.textContent = s.step + ' (' + s.seconds + ' s' + (s.pages ? ', ' + s.pages + ' pages written' : '') + ')';
  setTimeout(poll, 1000);
}
poll();
`;

function page(status: BuildStatus): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Building the course…</title>
<style>
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; line-height: 1.5; }
  main { max-width: 40rem; margin: 4rem auto; padding: 0 1rem; }
  output { display: block; font-size: 1.15rem; margin-block: 1rem; }
  pre { overflow-x: auto; font-size: 0.85rem; padding: 0.75rem; border: 1px solid #8886; }
  .bar { height: 4px; border-radius: 2px; background: #8884 linear-gradient(90deg, #3b82f6 0 30%, transparent 30%) 0 0 / 200% 100% no-repeat; animation: go 1.5s linear infinite; }
  .bar[hidden], pre[hidden] { display: none; }
  @keyframes go { from { background-position: 150% 0; } to { background-position: -50% 0; } }
  @media (prefers-reduced-motion: reduce) { .bar { animation: none; } }
</style>
</head>
<body>
<main>
<h1 id="heading">Building the course…</h1>
<p id="intro">Dataplane Lab is building its pages for the first time on this machine. That takes about a minute, once; later starts skip it. This page follows the build and opens the course when it is ready.</p>
<div class="bar" id="bar" aria-hidden="true"></div>
<output id="step" aria-live="polite">${escapeHtml(status.step)} (${status.seconds} s)</output>
<div id="failure" hidden>
<p id="fix"></p>
<pre id="tail"></pre>
</div>
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Answers any page request with the build page, and `/_dplab/build` with the status as JSON. */
export function createBuildPageHandler(status: () => BuildStatus) {
  return function serveBuildPage(req: IncomingMessage, res: ServerResponse): void {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    const head = { 'cache-control': 'no-store' };
    if (pathname === BUILD_STATUS_PATH) {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', ...head, ...pageHeaders() });
      res.end(JSON.stringify(status()));
      return;
    }
    const html = page(status());
    // 503: not the page that was asked for, and nothing should keep it; browsers show it all the same.
    res.writeHead(503, {
      'content-type': 'text/html; charset=utf-8',
      'retry-after': '2',
      ...head,
      ...pageHeaders(inlineScriptHashes(html)),
    });
    res.end(req.method === 'HEAD' ? undefined : html);
  };
}
