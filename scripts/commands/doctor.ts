import { parseModeArg } from '../clusters/mode-arg.ts';
import { MODES, type Mode } from '../catalogue/modes.ts';
import { formatFindings } from '../preflight/format.ts';
import { runPreflight } from '../preflight/index.ts';
import { parseFlags, usageError, type Command } from './command.ts';
import { commandInfo } from './catalogue.ts';

export const doctor: Command = {
  ...commandInfo('doctor'),
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(doctor, argv, {
      mode: { type: 'string' },
      seats: { type: 'string' },
      json: { type: 'boolean' },
    });
    if (positionals.length) throw usageError(doctor, `unexpected argument "${positionals[0]}".`);
    const modes: Mode[] = values.mode !== undefined ? [parseModeArg(doctor, values.mode)] : [...MODES];
    const seats = values.seats === undefined ? undefined : Number(values.seats);
    if (seats !== undefined && (!Number.isInteger(seats) || seats < 1 || seats > 1000))
      throw usageError(doctor, `--seats takes a whole number of seats 1–1000, got "${values.seats}".`);
    // Memory is judged for one cluster: labs run one mode at a time unless you start more.
    const report = await runPreflight({ modes, clusters: 1, seats });
    const { findings } = report;
    if (values.json) ctx.stdout.write(`${JSON.stringify({ ok: report.ok, modes, findings }, null, 2)}\n`);
    else ctx.stdout.write(`${formatFindings(findings)}\n`);
    return report.ok ? 0 : 1;
  },
};
