// @ts-check
import { defineConfig } from 'astro/config';
import starlight from '@astrojs/starlight';
import mdx from '@astrojs/mdx';
import dplabRunner from './scripts/astro-integration.ts';
import { courseSidebar } from './site/course/course.ts';
import { fileURLToPath } from 'node:url';

/**
 * Starlight's search imports Pagefind's UI on every page; give it site/client/search-on-demand.ts
 * instead, which loads the real UI when the search is first reached for.
 */
function searchOnDemand() {
  const standIn = fileURLToPath(new URL('./site/client/search-on-demand.ts', import.meta.url));
  return {
    name: 'dplab-search-on-demand',
    enforce: /** @type {const} */ ('pre'),
    /** @param {string} source @param {string | undefined} importer */
    resolveId(source, importer) {
      return source === '@pagefind/default-ui' && importer?.includes('@astrojs/starlight') ? standIn : null;
    },
  };
}

/**
 * The code of the pages with a workspace (labs, the scratch terminal, the clusters page): one
 * chunk instead of a dozen small files, which compress worse apart (~4 KB gzip more on a lab
 * page) and cost a request each. Lesson pages use none of it. xterm.js keeps its own chunk, and
 * what loads on demand (the dataplane view and its wire types, the scale chart and its
 * measurements, mermaid, search) stays apart.
 */
const WORKSPACE =
  /\/site\/client\/(lab-panel|lab\/(progress-store|result-view)|cluster-panel|cluster-state-event|terminal-element|terminal-tabs|page-mode|font-size|rich-text|runner-api|runner-auth|runner-events|when-shown)\.ts$|\/scripts\/wire\/(?!explain)|\/node_modules\/(zod|@xterm\/addon-fit)\/|\/site\/(components\/(LabPanel|ClusterPanel|Terminal|TerminalTabs|LabLayout|DataplanePanel)|pages\/terminal)\.astro\?astro&type=script/;
/**
 * What every page uses, lessons too; named, so the workspace chunk does not take it in (Rollup
 * moves a manual chunk's unassigned imports into it, and lessons would then load the workspace).
 */
const COMMON = /\/site\/client\/(dom|search-on-demand|lesson-read)\.ts$|vite\/preload-helper/;

/** The browser build only (Astro's server build chunks its own way). */
function workspaceChunk() {
  return {
    name: 'dplab-workspace-chunk',
    /** @param {unknown} _config @param {{ isSsrBuild?: boolean }} env */
    config(_config, env) {
      if (env.isSsrBuild) return {};
      /** @param {string} id */
      const manualChunks = (id) => (WORKSPACE.test(id) ? 'workspace' : COMMON.test(id) ? 'common' : undefined);
      return { build: { rollupOptions: { output: { manualChunks } } } };
    },
  };
}

export default defineConfig({
  srcDir: './site',
  // Static files (the favicon) live with the site; the top level of the repo is fixed.
  publicDir: './site/public',
  // DPLAB_DIST builds elsewhere (two builds at once must not share a folder).
  outDir: process.env.DPLAB_DIST ?? './dist',
  // The runner serves the built site on 127.0.0.1 only; links are root-relative.
  trailingSlash: 'ignore',
  integrations: [
    starlight({
      title: 'Dataplane Lab',
      description:
        'How a Kubernetes Service becomes packet forwarding: kube-proxy in iptables, IPVS and nftables modes, and Cilium eBPF, on your own kind clusters.',
      // The course's one order (site/course/course.ts, from scripts/catalogue/course-order.ts):
      // each lesson followed by its labs. Previous/Next follow it too (site/course/route-middleware.ts).
      sidebar: [
        { label: 'Welcome', link: '/' },
        { label: 'Course', items: courseSidebar() },
        {
          label: 'Overview and tools',
          items: [
            { label: 'All lessons', link: '/lessons/' },
            { label: 'All labs', link: '/labs/' },
            { label: 'Scratch terminal', link: '/terminal/' },
            { label: 'Clusters', link: '/clusters/' },
            { label: 'Dataplane explorer', link: '/explorer/' },
          ],
        },
      ],
      routeMiddleware: './site/course/route-middleware.ts',
      customCss: ['./site/styles/course.css'],
      components: { Search: './site/components/overrides/Search.astro', Footer: './site/components/overrides/Footer.astro' },
      // First thing on every page: the runner token moves from the link's #fragment into this
      // origin's storage (site/public/dplab-token.js; see site/client/runner-auth.ts).
      head: [{ tag: 'script', attrs: { src: '/dplab-token.js' } }],
      lastUpdated: false,
      pagination: true,
    }),
    mdx(),
    dplabRunner(),
  ],
  vite: {
    plugins: [searchOnDemand(), workspaceChunk()],
    ssr: { external: ['@lydell/node-pty'] },
    optimizeDeps: { exclude: ['@lydell/node-pty'] },
  },
});
