/**
 * Mounts the runner inside `astro dev`: the same module `dplab serve` uses, attached to Vite's
 * server. It claims only /api/* and old `?token=` links; other requests and upgrades (Vite's
 * HMR socket) pass through untouched. Imports are static: Astro loads this file through a
 * Vite module runner that is closed by the time the hooks run, so a dynamic import would fail.
 */
import type { AstroIntegration } from 'astro';
import { createRunner, type Runner } from './server/app.ts';
import { generateToken } from './server/security.ts';
import { viewerLink } from './server/http.ts';

export default function dplabRunner(): AstroIntegration {
  let runner: Runner | null = null;
  return {
    name: 'dplab-runner',
    hooks: {
      'astro:server:setup'({ server }) {
        const created = createRunner({ token: process.env.DPLAB_TOKEN || generateToken(), terminalNotice: true });
        runner = created;
        server.middlewares.use((req, res, next) => created.handle(req, res, next));
        server.httpServer?.on('upgrade', (req, socket, head) => {
          created.handleUpgrade(req, socket, head);
        });
      },
      'astro:server:start'({ address }) {
        if (!runner) return;
        console.log(`Dataplane Lab: http://127.0.0.1:${address.port}/#token=${runner.token}`);
        console.log(`Viewer link (read-only): ${viewerLink(`http://127.0.0.1:${address.port}`, runner.viewerToken)}`);
      },
      async 'astro:server:done'() {
        await runner?.close();
        runner = null;
      },
    },
  };
}
