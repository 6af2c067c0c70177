/**
 * The scale chart as numbers, no DOM: from stored measurements to axes with round ticks and one
 * series of pixel points per mode. Kept pure so vitest checks the maths and scale-chart.ts only
 * turns the model into SVG.
 */
import type { Measurement } from './measurements.ts';
import { MODES } from '../../../scripts/wire/modes.ts';

/** The value a chart plots against the number of Services. */
export type ChartValue = 'entries' | 'syncMsAvg' | 'connectUs';

export interface ChartSize {
  width: number;
  height: number;
  /** Room for tick labels (left, bottom), the y axis title (top) and the last x tick label (right). */
  margin: { top: number; right: number; bottom: number; left: number };
}

export const DEFAULT_SIZE: ChartSize = { width: 560, height: 260, margin: { top: 24, right: 24, bottom: 36, left: 52 } };

interface Tick {
  value: number;
  /** Pixel position along its axis. */
  pos: number;
}

export interface Point {
  x: number;
  y: number;
  services: number;
  value: number;
}

interface Series {
  mode: string;
  points: Point[];
}

export interface ChartModel {
  size: ChartSize;
  /** The plot area in pixels. */
  plot: { left: number; top: number; right: number; bottom: number };
  xTicks: Tick[];
  yTicks: Tick[];
  series: Series[];
}

/** The course's modes first, in the order the course teaches them; anything else after, by name. */
const MODE_ORDER: readonly string[] = MODES;
const modeRank = (m: string) => (MODE_ORDER.includes(m) ? MODE_ORDER.indexOf(m) : MODE_ORDER.length);

/** The smallest 1, 2, 2.5 or 5 × 10^k at least `v`: a tick step people read at a glance. */
export function niceStep(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  return ([1, 2, 2.5, 5, 10].find((f) => f * p >= v * (1 - 1e-9)) ?? 10) * p;
}

/** Ticks from 0 up to the first round value at or above `max`, about four steps. */
export function axisTicks(max: number, steps = 4): number[] {
  const step = niceStep(max / steps);
  const top = Math.max(step, Math.ceil(max / step - 1e-9) * step);
  const ticks: number[] = [];
  for (let i = 0; i * step <= top + step / 2; i++) ticks.push(Number((i * step).toPrecision(12)));
  return ticks;
}

export function chartModel(measurements: readonly Measurement[], value: ChartValue, size: ChartSize = DEFAULT_SIZE): ChartModel {
  const plot = {
    left: size.margin.left,
    top: size.margin.top,
    right: size.width - size.margin.right,
    bottom: size.height - size.margin.bottom,
  };
  const usable = measurements.filter((m) => typeof m[value] === 'number');
  const xValues = axisTicks(Math.max(0, ...usable.map((m) => m.services)));
  const yValues = axisTicks(Math.max(0, ...usable.map((m) => m[value]!)));
  const xMax = xValues[xValues.length - 1];
  const yMax = yValues[yValues.length - 1];
  const x = (v: number) => plot.left + (v / xMax) * (plot.right - plot.left);
  const y = (v: number) => plot.bottom - (v / yMax) * (plot.bottom - plot.top);
  const modes = [...new Set(usable.map((m) => m.mode))].sort((a, b) => modeRank(a) - modeRank(b) || a.localeCompare(b));
  const series = modes.map((mode) => ({
    mode,
    points: usable
      .filter((m) => m.mode === mode)
      .sort((a, b) => a.services - b.services)
      .map((m) => ({ x: x(m.services), y: y(m[value]!), services: m.services, value: m[value]! })),
  }));
  return {
    size,
    plot,
    xTicks: xValues.map((v) => ({ value: v, pos: x(v) })),
    yTicks: yValues.map((v) => ({ value: v, pos: y(v) })),
    series,
  };
}

/** `M x y L x y …` through a series' points, for an SVG path. */
export function linePath(points: readonly Point[]): string {
  return points.map((p, i) => `${i ? 'L' : 'M'}${p.x.toFixed(1)} ${p.y.toFixed(1)}`).join(' ');
}
