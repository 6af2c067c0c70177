import type { Command } from './command.ts';
import { parseFlags } from './command.ts';
import { commandInfo } from './catalogue.ts';
import { loadLabs } from '../labs/registry.ts';
import { labSummary } from '../labs/view.ts';

export const labs: Command = {
  ...commandInfo('labs'),
  async run(argv, ctx) {
    const { values } = parseFlags(this, argv, { json: { type: 'boolean' } }, false);
    const all = loadLabs().map(labSummary);
    if (values.json) {
      ctx.stdout.write(`${JSON.stringify(all, null, 2)}\n`);
      return 0;
    }
    const out: string[] = [];
    for (const lab of all) {
      out.push(`${lab.id} — ${lab.title} (${lab.minutes} min)`, `  modes: ${lab.modes.join(', ')} · concepts: ${lab.concepts.join(', ')}`);
      const w = Math.max(...lab.steps.map((s) => s.id.length));
      lab.steps.forEach((s, i) => out.push(`  ${i + 1}. ${s.id.padEnd(w)}  ${s.title}`));
      out.push('');
    }
    out.push('Check a step: dplab check <lab> [<step>] [--mode <mode>]');
    ctx.stdout.write(`${out.join('\n')}\n`);
    return 0;
  },
};
