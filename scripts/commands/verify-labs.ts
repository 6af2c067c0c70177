import type { Command } from './command.ts';
import { parseFlags, usageError } from './command.ts';
import { commandInfo } from './catalogue.ts';
import { isMode, MODES } from '../catalogue/modes.ts';
import { verifyLabs } from '../labs/harness.ts';
import { rewordRecordings, writeToDisk } from '../labs/reword.ts';
import { loadLabs, requireLab } from '../labs/registry.ts';
import { sharedClusterManager } from '../services/runner-services.ts';
import { progressPrinter } from '../clusters/cli-progress.ts';
import { clusterProviders } from '../clusters/providers.ts';
import { isSimMode, SIM_MODES, simUnsupported } from '../sim/layout.ts';
import type { Mode } from '../catalogue/modes.ts';

export const verifyLabsCommand: Command = {
  ...commandInfo('verify-labs'),
  async run(argv, ctx) {
    const { values } = parseFlags(
      this,
      argv,
      { lab: { type: 'string' }, mode: { type: 'string' }, record: { type: 'boolean' }, reword: { type: 'boolean' } },
      false,
    );
    if (values.reword) {
      if (values.record || values.mode !== undefined)
        throw usageError(this, '--reword reads the stored observations of every mode; it takes no --record or --mode');
      const report = rewordRecordings(values.lab ? [requireLab(values.lab)] : loadLabs(), { write: writeToDisk });
      for (const r of report.reworded) ctx.stdout.write(`✓ ${r.file}\n    was: ${r.from}\n    now: ${r.to}\n`);
      for (const r of report.left) ctx.stdout.write(`✗ ${r.file}: ${r.why}\n`);
      ctx.stdout.write(
        `${report.reworded.length} reworded, ${report.unchanged} unchanged${report.left.length ? `, ${report.left.length} left (see above)` : ''}.\n`,
      );
      return report.left.length ? 1 : 0;
    }
    if (values.mode !== undefined && !isMode(values.mode))
      throw usageError(this, `unknown mode "${values.mode}"; known: ${MODES.join(', ')}`);
    const labs = values.lab ? [requireLab(values.lab)] : loadLabs();
    let modes: readonly Mode[] | undefined = values.mode && isMode(values.mode) ? [values.mode] : undefined;
    if (clusterProviders().requested === 'sim') {
      const bad = modes?.find((m) => !isSimMode(m));
      if (bad) throw simUnsupported(bad);
      modes ??= SIM_MODES;
      const needed = modes.filter((m) => labs.some((l) => l.modes.includes(m)));
      const printer = progressPrinter(ctx.stderr);
      try {
        for (const m of needed) await sharedClusterManager().ensure(m, { onEvent: printer.onEvent });
      } finally {
        printer.dispose();
      }
    }
    const report = await verifyLabs(labs, { modes, record: values.record, log: (l) => ctx.stderr.write(`… ${l}\n`) });
    ctx.stdout.write(`${report.table}\n`);
    for (const r of report.rows.filter((x) => x.breach)) ctx.stdout.write(`✗ ${r.lab} / ${r.mode} / ${r.step}: ${r.breach}\n`);
    if (report.rows.length === 0) ctx.stdout.write('No lab runs on the chosen mode.\n');
    const breaches = report.rows.filter((r) => r.breach).length;
    ctx.stdout.write(
      report.ok
        ? `Contract holds for ${report.rows.length} step runs.${values.record ? ' Observations recorded.' : ''}\n`
        : `${breaches} contract breach${breaches === 1 ? '' : 'es'}.\n`,
    );
    return report.ok ? 0 : 1;
  },
};
