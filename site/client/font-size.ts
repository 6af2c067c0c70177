/**
 * One text-size setting for lab pages (laptop or projector), kept across reloads. The
 * terminal and the instructions both follow it.
 */
const KEY = 'dplab:font-size';
export const FONT_SIZES = { min: 10, max: 32, default: 14, step: 2 } as const;
const EVENT = 'dplab:font-size';

export function fontSize(): number {
  const stored = Number(localStorage.getItem(KEY));
  return Number.isFinite(stored) && stored >= FONT_SIZES.min && stored <= FONT_SIZES.max ? stored : FONT_SIZES.default;
}

export function setFontSize(px: number): number {
  const clamped = Math.min(FONT_SIZES.max, Math.max(FONT_SIZES.min, Math.round(px)));
  localStorage.setItem(KEY, String(clamped));
  document.documentElement.style.setProperty('--dplab-font-size', `${clamped}px`);
  document.dispatchEvent(new CustomEvent(EVENT, { detail: clamped }));
  return clamped;
}

export function onFontSizeChange(listener: (px: number) => void): () => void {
  const handler = (ev: Event) => listener((ev as CustomEvent<number>).detail);
  document.addEventListener(EVENT, handler);
  return () => document.removeEventListener(EVENT, handler);
}
