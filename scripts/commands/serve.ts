import type { Command, CommandContext } from './command.ts';
import { parseFlags, usageError } from './command.ts';
import { startServer, DEFAULT_HOST, DEFAULT_PORT, isLoopback } from '../server/http.ts';
import { buildIsStale, buildSite } from '../site-build.ts';
import { DplabError } from '../errors.ts';

/** The elapsed time on the progress line ticks this often (on a terminal only). */
const TICK_MS = 1_000;

/** One line while the site builds (updated in place on a terminal), the log to a file; its tail on failure. */
async function buildWithProgress(reason: string, ctx: CommandContext): Promise<void> {
  const out = ctx.stdout;
  const started = Date.now();
  const line = (suffix: string) => `Building the course (${reason})… ${suffix}`;
  const seconds = () => `${Math.round((Date.now() - started) / 1000)} s`;
  out.write(out.isTTY ? line(seconds()) : `${line('')}\n`);
  const tick = out.isTTY ? setInterval(() => out.write(`\r${line(seconds())}`), TICK_MS) : undefined;
  try {
    await buildSite();
    if (out.isTTY) out.write(`\r\x1b[2K${line(`done in ${seconds()}`)}\n`);
  } catch (err) {
    if (out.isTTY) out.write(`\r\x1b[2K${line('failed')}\n`);
    if (err instanceof DplabError && err.details) ctx.stderr.write(`${err.details}\n`);
    throw err;
  } finally {
    if (tick) clearInterval(tick);
  }
}
import { distDir } from '../paths.ts';

export const serve: Command = {
  name: 'serve',
  summary: 'Serve the course, the runner API and the terminals on 127.0.0.1.',
  usage:
    'dplab serve [--host H] [--port P] [--allow-host NAME]… [--max-terminals N] [--build-if-needed]   (env: HOST, PORT, DPLAB_TOKEN, DPLAB_ALLOW_HOSTS=a,b, DPLAB_MAX_TERMINALS)',
  async run(argv, ctx) {
    const { values } = parseFlags(
      this,
      argv,
      {
        host: { type: 'string' },
        port: { type: 'string' },
        'allow-host': { type: 'string', multiple: true },
        'max-terminals': { type: 'string' },
        'build-if-needed': { type: 'boolean' },
      },
      false,
    );
    const allowHosts = [...(values['allow-host'] ?? []), ...(process.env.DPLAB_ALLOW_HOSTS ?? '').split(',')]
      .map((h) => h.trim())
      .filter(Boolean);
    for (const h of allowHosts) {
      // A name, an IPv4 or a bare IPv6 address: the Host header is matched as `name:port`.
      if (!/^[A-Za-z0-9.-]+$|^[0-9A-Fa-f:]+$/.test(h))
        throw usageError(this, `--allow-host takes a host name or address without port or scheme, got "${h}".`);
    }
    const maxText = values['max-terminals'] ?? process.env.DPLAB_MAX_TERMINALS;
    const maxTerminals = maxText === undefined ? undefined : Number(maxText);
    if (maxTerminals !== undefined && (!Number.isInteger(maxTerminals) || maxTerminals < 1 || maxTerminals > 1000)) {
      throw usageError(this, `max-terminals must be an integer 1–1000, got "${maxText}".`);
    }
    const host = values.host ?? process.env.HOST ?? DEFAULT_HOST;
    const portText = values.port ?? process.env.PORT;
    const port = portText === undefined ? DEFAULT_PORT : Number(portText);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw usageError(this, `port must be an integer 0–65535, got "${portText}".`);

    if (values['build-if-needed']) {
      const { stale, reason } = buildIsStale();
      if (stale) await buildWithProgress(reason, ctx);
    }
    if (!isLoopback(host)) {
      ctx.stderr.write(
        `Warning: listening on ${host}, not loopback. Anyone who can reach this address and has the token gets a shell on this machine.\n`,
      );
    }
    const running = await startServer({
      host,
      port,
      portExplicit: portText !== undefined,
      token: process.env.DPLAB_TOKEN || undefined,
      siteDir: distDir,
      terminalNotice: true,
      allowHosts,
      maxTerminals,
    });
    ctx.stdout.write(`Dataplane Lab: ${running.url}\n`);
    ctx.stdout.write(`Viewer link (read-only mirror of your terminal, for the audience): ${running.viewerUrl}\n`);
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
