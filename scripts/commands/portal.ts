/**
 * `dplab portal`: run a workshop. Learners open one link, enter the code and a name, and get
 * a seat of their own; the instructor's dashboard shows every seat's progress.
 */
import { join } from 'node:path';
import type { Command } from './command.ts';
import { parseFlags, usageError } from './command.ts';
import { commandInfo } from './catalogue.ts';
import { parseModeArg } from '../clusters/mode-arg.ts';
import type { Mode } from '../catalogue/modes.ts';
import { loadLabs, requireLab } from '../labs/registry.ts';
import { distDir, stateDir } from '../base/paths.ts';
import { buildIsStale } from '../base/site-build.ts';
import { DplabError } from '../base/errors.ts';
import { LocalSeatBackend } from '../portal/local-backend.ts';
import { SeatUsers } from '../portal/seat-users.ts';
import { describeLimits, detectCgroups, SeatCgroups, seatLimits } from '../terminals/seat-cgroup.ts';
import { kubernetesSeatBackendFromEnv } from '../portal/kubernetes-backend.ts';
import { startPortal } from '../portal/server.ts';
import { labOutline } from '../portal/dashboard.ts';

const MAX_SEATS = 200;

function count(command: Command, name: string, text: string | undefined, fallback: number, min: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > MAX_SEATS)
    throw usageError(command, `--${name} must be an integer ${min}–${MAX_SEATS}, got "${text}".`);
  return n;
}

export const portal: Command = {
  ...commandInfo('portal'),
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(this, argv, {
      lab: { type: 'string' },
      seats: { type: 'string' },
      'max-seats': { type: 'string' },
      warm: { type: 'string', multiple: true },
      code: { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      'behind-tls': { type: 'boolean' },
      'public-host': { type: 'string', multiple: true },
      'idle-minutes': { type: 'string' },
      backend: { type: 'string' },
      'shared-user': { type: 'boolean' },
      'seat-memory': { type: 'string' },
      'seat-pids': { type: 'string' },
    });
    const backendKind = values.backend ?? 'local';
    if (backendKind !== 'local' && backendKind !== 'kubernetes')
      throw usageError(this, `--backend takes local or kubernetes, got "${backendKind}".`);
    if (positionals.length) throw usageError(this, `unexpected argument "${positionals[0]}".`);
    const seats = count(this, 'seats', values.seats, 0, 0);
    const maxSeats = count(this, 'max-seats', values['max-seats'], Math.max(seats, 30), 1);
    if (maxSeats < seats) throw usageError(this, `--max-seats (${maxSeats}) is below --seats (${seats}).`);
    const idleMinutes = count(this, 'idle-minutes', values['idle-minutes'], 10, 1);
    const lab = values.lab !== undefined ? requireLab(values.lab) : loadLabs()[0];
    if (!lab) throw new DplabError('There is no lab to run a workshop on.');
    const warm: Mode[] = (values.warm ?? []).map((m) => parseModeArg(this, m));
    for (const m of warm)
      if (!lab.modes.includes(m)) throw usageError(this, `${lab.id} does not run on ${m}; it runs on ${lab.modes.join(', ')}.`);
    if (values.code !== undefined && !/^[A-Za-z0-9-]{4,40}$/.test(values.code))
      throw usageError(this, '--code takes 4–40 letters, digits or dashes.');
    for (const h of values['public-host'] ?? [])
      if (!/^[A-Za-z0-9.-]+(:\d+)?$/.test(h)) throw usageError(this, `--public-host takes a host name (and port), no scheme, got "${h}".`);
    const portText = values.port ?? process.env.PORT;
    const port = portText === undefined ? 4400 : Number(portText);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw usageError(this, `port must be an integer 0–65535, got "${portText}".`);
    if (buildIsStale().stale)
      ctx.stderr.write(
        'Note: the built course is missing or older than its sources; run `npm run build` first so learners get the current pages.\n',
      );

    if (values['shared-user'] && backendKind !== 'local') throw usageError(this, '--shared-user is for the local backend.');
    const seatUsers = backendKind === 'local' && !values['shared-user'] && process.platform === 'linux' && process.getuid?.() === 0;
    if (backendKind === 'local' && !seatUsers)
      ctx.stderr.write(
        values['shared-user']
          ? "Note: every seat's shells run as you (--shared-user): learners can read each other's seat folders.\n"
          : "Note: every seat's shells run as you, so learners can read each other's seat folders; run the portal as root (Linux) to give each seat a Unix user of its own.\n",
      );
    if ((values['seat-memory'] !== undefined || values['seat-pids'] !== undefined) && !seatUsers)
      throw usageError(this, '--seat-memory and --seat-pids are for the local backend with a Unix user per seat (the portal as root).');
    let limits;
    try {
      limits = seatLimits({ memory: values['seat-memory'], pids: values['seat-pids'] });
    } catch (err) {
      throw usageError(this, (err as Error).message);
    }
    // Said once: what bounds a seat on this host (README "Seat limits").
    const cgroupHost = seatUsers ? detectCgroups() : undefined;
    if (cgroupHost) ctx.stderr.write(`${describeLimits(cgroupHost, limits)}\n`);
    const seatCgroups = cgroupHost && cgroupHost.kind !== 'none' ? new SeatCgroups(cgroupHost, limits) : undefined;
    const portalState = join(stateDir(), 'portal');
    const backend =
      backendKind === 'kubernetes'
        ? kubernetesSeatBackendFromEnv(process.env, (line) => ctx.stderr.write(`${line}\n`))
        : new LocalSeatBackend({ stateDir: portalState, ...(seatUsers ? { seatUsers: new SeatUsers(), seatCgroups } : {}) });
    const running = await startPortal({
      backend,
      lab: labOutline(lab),
      siteDir: distDir,
      host: values.host,
      port,
      behindTls: values['behind-tls'],
      publicHosts: values['public-host'],
      code: values.code,
      instructorToken: process.env.DPLAB_PORTAL_TOKEN || undefined,
      warm,
      seats,
      maxSeats,
      idleMs: idleMinutes * 60_000,
      note: (line) => ctx.stderr.write(`${line}\n`),
      stateDir: portalState,
    });
    ctx.stdout.write(
      [
        `Workshop "${lab.title}": up to ${maxSeats} seats${seats ? `, ${seats} being made now${warm.length ? ` with ${warm.join(', ')} clusters` : ''}` : ''}.`,
        `Learners: ${running.joinUrl}   code ${running.code}`,
        // A token the operator chose is theirs already, and may be reused: never printed (a scrollback, a shared screen).
        process.env.DPLAB_PORTAL_TOKEN
          ? `Instructor: ${running.dashboardUrl.replace(/#token=.*$/, '#token=')}<your DPLAB_PORTAL_TOKEN>`
          : `Instructor (keep this link to yourself): ${running.dashboardUrl}`,
        '',
      ].join('\n'),
    );
    await new Promise<void>((resolve) => {
      const stop = () => {
        ctx.stdout.write('\nEnding the workshop: deleting every seat’s clusters and stopping the seats (Ctrl-C again leaves them).\n');
        process.once('SIGINT', () => process.exit(130));
        void running.workshop
          .end()
          .then(({ failed }) => {
            if (failed.length)
              ctx.stderr.write(
                `Could not end seats ${failed.join(', ')}; their folders are under ${join(stateDir(), 'portal', 'seats')}.\n`,
              );
          })
          .finally(() => void running.close().finally(resolve));
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    return 0;
  },
};
