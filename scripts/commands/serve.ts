import type { Command } from './command.ts';
import { parseFlags, usageError } from './command.ts';
import { commandInfo } from './catalogue.ts';
import { startServer, DEFAULT_HOST, DEFAULT_PORT } from '../server/http.ts';
import { isLoopback } from '../server/core/http-server.ts';
import { BuildProgress, buildIsStale } from '../base/site-build.ts';
import { buildWithProgress } from './build.ts';
import { distDir } from '../base/paths.ts';

/** After a failed build the build page gets this long to show the failure (it asks every second) before the server stops. */
const FAILURE_SHOWN_MS = 3_000;

/** What `dplab serve`'s flags and environment ask for (usage mistakes thrown as the command's usage error). */
export function serveSettings(argv: string[], env: NodeJS.ProcessEnv = process.env) {
  const { values } = parseFlags(
    serve,
    argv,
    {
      host: { type: 'string' },
      port: { type: 'string' },
      'allow-host': { type: 'string', multiple: true },
      'max-terminals': { type: 'string' },
      'build-if-needed': { type: 'boolean' },
      'no-warm': { type: 'boolean' },
    },
    false,
  );
  const allowHosts = [...(values['allow-host'] ?? []), ...(env.DPLAB_ALLOW_HOSTS ?? '').split(',')].map((h) => h.trim()).filter(Boolean);
  for (const h of allowHosts) {
    // A name, an IPv4 or a bare IPv6 address: the Host header is matched as `name:port`.
    if (!/^[A-Za-z0-9.-]+$|^[0-9A-Fa-f:]+$/.test(h))
      throw usageError(serve, `--allow-host takes a host name or address without port or scheme, got "${h}".`);
  }
  const maxText = values['max-terminals'] ?? env.DPLAB_MAX_TERMINALS;
  const maxTerminals = maxText === undefined ? undefined : Number(maxText);
  if (maxTerminals !== undefined && (!Number.isInteger(maxTerminals) || maxTerminals < 1 || maxTerminals > 1000)) {
    throw usageError(serve, `max-terminals must be an integer 1–1000, got "${maxText}".`);
  }
  const host = values.host ?? env.HOST ?? DEFAULT_HOST;
  const portText = values.port ?? env.PORT;
  const port = portText === undefined ? DEFAULT_PORT : Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw usageError(serve, `port must be an integer 0–65535, got "${portText}".`);
  // Starting the next lab's cluster ahead is on unless asked off (a seat's runner declines by itself).
  const warm = !values['no-warm'] && env.DPLAB_NO_WARM !== '1';
  return { host, port, portExplicit: portText !== undefined, allowHosts, maxTerminals, warm, buildIfNeeded: !!values['build-if-needed'] };
}

export const serve: Command = {
  ...commandInfo('serve'),
  async run(argv, ctx) {
    const { host, port, portExplicit, allowHosts, maxTerminals, warm, buildIfNeeded } = serveSettings(argv);

    // A missing or stale build is made while the server already answers: the link works at
    // once and shows the build's progress, then the course.
    const { stale, reason } = buildIfNeeded ? buildIsStale() : { stale: false, reason: '' };
    const progress = stale ? new BuildProgress() : undefined;
    if (!isLoopback(host)) {
      ctx.stderr.write(
        `Warning: listening on ${host}, not loopback. Anyone who can reach this address and has the token gets a shell on this machine.\n`,
      );
    }
    const running = await startServer({
      host,
      port,
      portExplicit,
      token: process.env.DPLAB_TOKEN || undefined,
      siteDir: distDir,
      terminalNotice: true,
      allowHosts,
      maxTerminals,
      warm,
      building: progress,
    });
    // A token the caller chose (DPLAB_TOKEN) is theirs already, and often a secret's (a seat
    // pod's): printing it would copy it into whatever keeps this output, a pod's log included.
    const link = process.env.DPLAB_TOKEN ? running.url.replace(/#token=.*$/, '#token=<DPLAB_TOKEN>') : running.url;
    ctx.stdout.write(`Dataplane Lab: ${link}\n`);
    ctx.stdout.write(`Viewer link (read-only mirror of your terminal, for the audience): ${running.viewerUrl}\n`);
    if (progress) {
      try {
        await buildWithProgress(reason, progress, ctx);
      } catch (err) {
        // The page shows the failure too; the terminal gets the error and the exit code.
        await new Promise((resolve) => setTimeout(resolve, FAILURE_SHOWN_MS));
        await running.close();
        throw err;
      }
    }
    await new Promise<void>((resolve) => {
      const stop = () => {
        ctx.stdout.write('\nStopping; open terminals are closed.\n');
        void running.close().finally(resolve);
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    return 0;
  },
};
