/**
 * The scale chart's pure half: round axes, one series per mode in the course's order, points
 * placed on the plot, and check figures turned into stored measurements.
 */
import { describe, expect, it } from 'vitest';
import { fromFigures, upsert, type Measurement } from './measurements.ts';
import { axisTicks, chartModel, DEFAULT_SIZE, linePath, niceStep } from './scale-chart-model.ts';

const m = (mode: string, services: number, entries: number, syncMsAvg?: number): Measurement => ({
  mode,
  services,
  entries,
  entriesLabel: `${mode} entries`,
  ...(syncMsAvg === undefined ? {} : { syncMsAvg }),
});
const MEASURED = [
  m('ipvs', 1000, 1004, 40),
  m('iptables', 0, 38, 14.2),
  m('cilium', 100, 104),
  m('iptables', 1000, 11038, 180.5),
  m('iptables', 100, 1138, 20.2),
  m('ipvs', 0, 4, 7.9),
];

describe('axes', () => {
  it('steps are 1, 2, 2.5 or 5 times a power of ten', () => {
    expect([0.3, 1, 3, 7, 24, 250, 2759.5].map(niceStep)).toEqual([0.5, 1, 5, 10, 25, 250, 5000]);
    expect(niceStep(0)).toBe(1);
  });

  it('ticks start at 0 and end at the first round value at or above the maximum', () => {
    expect(axisTicks(1000)).toEqual([0, 250, 500, 750, 1000]);
    expect(axisTicks(11038)).toEqual([0, 5000, 10000, 15000]);
    expect(axisTicks(180.5)).toEqual([0, 50, 100, 150, 200]);
    expect(axisTicks(0)).toEqual([0, 1]);
  });
});

describe('chartModel', () => {
  const model = chartModel(MEASURED, 'entries');
  const { plot } = model;

  it('has one series per mode, in the course order, points sorted by Services', () => {
    expect(model.series.map((s) => s.mode)).toEqual(['iptables', 'ipvs', 'cilium']);
    expect(model.series[0].points.map((p) => [p.services, p.value])).toEqual([
      [0, 38],
      [100, 1138],
      [1000, 11038],
    ]);
  });

  it('maps 0 to the plot corner and the axis maximum to the far edges', () => {
    expect(plot).toEqual({ left: 52, top: 24, right: DEFAULT_SIZE.width - 24, bottom: DEFAULT_SIZE.height - 36 });
    const [first, , last] = model.series[0].points;
    expect(first.x).toBe(plot.left);
    expect(last.x).toBe(plot.right); // 1000 Services is the x axis' last tick
    expect(first.y).toBeCloseTo(plot.bottom - (38 / 15000) * (plot.bottom - plot.top));
    expect(last.y).toBeCloseTo(plot.bottom - (11038 / 15000) * (plot.bottom - plot.top));
    expect(model.yTicks.at(-1)).toEqual({ value: 15000, pos: plot.top });
    expect(model.xTicks.map((t) => t.value)).toEqual([0, 250, 500, 750, 1000]);
  });

  it('the sync-time chart leaves out measurements without a sync time (Cilium)', () => {
    const sync = chartModel(MEASURED, 'syncMsAvg');
    expect(sync.series.map((s) => s.mode)).toEqual(['iptables', 'ipvs']);
    expect(sync.yTicks.at(-1)?.value).toBe(200);
  });

  it('an empty list still gives drawable axes', () => {
    const empty = chartModel([], 'entries');
    expect(empty.series).toEqual([]);
    expect(empty.xTicks.map((t) => t.value)).toEqual([0, 1]);
  });

  it('draws a path through the points', () => {
    expect(
      linePath([
        { x: 1, y: 2, services: 0, value: 0 },
        { x: 3.25, y: 4, services: 1, value: 1 },
      ]),
    ).toBe('M1.0 2.0 L3.3 4.0');
  });
});

describe('measurements from figures', () => {
  it('takes services, entries and sync time from a check verdict', () => {
    const figures = {
      services: { value: 100, label: 'generated Services' },
      entries: { value: 1138, label: 'KUBE-* rules in iptables-save' },
      syncMsAvg: { value: 20.2, label: 'ms' },
      syncMsP90: { value: 32, label: 'ms' },
    };
    expect(fromFigures('iptables', figures)).toEqual({
      mode: 'iptables',
      services: 100,
      entries: 1138,
      entriesLabel: 'KUBE-* rules in iptables-save',
      syncMsAvg: 20.2,
      syncMsP90: 32,
    });
    expect(fromFigures('cilium', { services: { value: 0, label: '' }, entries: { value: 4, label: 'frontends' } })).toEqual({
      mode: 'cilium',
      services: 0,
      entries: 4,
      entriesLabel: 'frontends',
    });
  });

  it('makes no point without both numbers', () => {
    expect(fromFigures('iptables', undefined)).toBeUndefined();
    expect(fromFigures('iptables', { entries: { value: 4, label: '' } })).toBeUndefined();
  });

  it('a new measurement of the same mode and Service count replaces the old one', () => {
    const list = upsert(upsert([m('iptables', 100, 900)], m('ipvs', 100, 104)), m('iptables', 100, 1138));
    expect(list.map((x) => [x.mode, x.services, x.entries])).toEqual([
      ['iptables', 100, 1138],
      ['ipvs', 100, 104],
    ]);
  });
});
