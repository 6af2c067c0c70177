/**
 * `dplab build` (what `npm run build` runs): builds the course the way `dplab serve
 * --build-if-needed` does, with the same progress line, the log in .dplab/build.log and the
 * stamp the staleness check reads, so a start after it does not build again.
 */
import type { Command, CommandContext } from './command.ts';
import { parseFlags } from './command.ts';
import { commandInfo } from './catalogue.ts';
import { BuildProgress, buildIsStale, buildSite } from '../base/site-build.ts';
import { DplabError } from '../base/errors.ts';

/** The progress line ticks this often (on a terminal only). */
const TICK_MS = 1_000;

/**
 * Build the course with one line of progress on the terminal (updated in place there), the log
 * to a file and its tail on failure. `progress` is also what serve's build page reads while the
 * server already answers; `dplab build` alone has nobody else reading it.
 */
export async function buildWithProgress(reason: string | null, progress: BuildProgress, ctx: CommandContext): Promise<void> {
  const out = ctx.stdout;
  const building = `Building the course${reason ? ` (${reason})` : ''}…`;
  const line = () => {
    const s = progress.status();
    return `${building} ${s.step}, ${s.seconds} s${s.pages ? `, ${s.pages} pages` : ''}`;
  };
  out.write(out.isTTY ? line() : `${building}\n`);
  const tick = out.isTTY ? setInterval(() => out.write(`\r\x1b[2K${line()}`), TICK_MS) : undefined;
  try {
    await buildSite({ onOutput: progress.onOutput });
    const seconds = progress.status().seconds;
    progress.done();
    out.write(`${out.isTTY ? '\r\x1b[2K' : ''}Built the course in ${seconds} s.\n`);
  } catch (err) {
    progress.failed(err);
    if (out.isTTY) out.write(`\r\x1b[2K${line()}: failed\n`);
    if (err instanceof DplabError && err.details) ctx.stderr.write(`${err.details}\n`);
    throw err;
  } finally {
    if (tick) clearInterval(tick);
  }
}

export const build: Command = {
  ...commandInfo('build'),
  async run(argv, ctx) {
    parseFlags(this, argv, {}, false);
    const stale = buildIsStale();
    await buildWithProgress(stale.stale ? stale.reason : null, new BuildProgress(), ctx);
    return 0;
  },
};
