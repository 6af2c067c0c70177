/**
 * The cost of a new connection as recorded on real kind clusters (connection-cost.json, which
 * the page carries in `data-recorded`): the connection chart and the rule-count chart beside
 * it, drawn by the scale chart's own `figure()`. The table with every number is in the page
 * already (RecordedConnectionCost.astro), so this adds the pictures and nothing a reader needs.
 */
import { connectionCostSchema } from '../../../scripts/wire/connection-cost.ts';
import { recordedMeasurements } from './measurements.ts';
import { connectText, entriesText, figure } from './scale-chart.ts';
import { DEFAULT_SIZE } from './scale-chart-model.ts';

function drawRecordedCost(root: HTMLElement): void {
  const target = root.querySelector<HTMLElement>('.dplab-recorded-charts');
  let raw: unknown;
  try {
    raw = JSON.parse(root.dataset.recorded ?? 'null');
  } catch {
    return;
  }
  const parsed = connectionCostSchema.safeParse(raw);
  if (!target || !parsed.success) return;
  const list = recordedMeasurements(parsed.data);
  if (!list.length) return;
  const what = (mode: string) => list.find((m) => m.mode === mode)?.entriesLabel ?? '';
  const missing = parsed.data.modes.filter((m) => !m.recorded).map((m) => m.mode);
  const notYet = missing.length ? ` Not recorded yet: ${missing.join(', ')} (the table says why).` : '';
  target.replaceChildren(
    figure(
      list,
      'connectUs',
      connectText(
        'dplab-recorded-connect',
        'Recorded: a new TCP connection to a ClusterIP from a node, median, against generated Services',
      ),
      () => '',
      `Median of ${parsed.data.samples} connections per point, after ${parsed.data.warmUp} to warm up; on iptables to the Service whose KUBE-SERVICES rule came last.${notYet}`,
      DEFAULT_SIZE.height,
    ),
    figure(
      list,
      'entries',
      entriesText('dplab-recorded-entries', 'Recorded: rules or entries on the node against generated Services'),
      what,
      'The same clusters: what each dataplane holds on the node at each size.',
      200,
    ),
  );
}

for (const root of document.querySelectorAll<HTMLElement>('[data-recorded-cost]')) drawRecordedCost(root);
