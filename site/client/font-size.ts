/**
 * One text-size setting for lab pages (laptop or projector), kept across reloads. The
 * terminal and the instructions both follow it.
 */
const KEY = 'dplab:font-size';
export const FONT_SIZES = { min: 10, max: 32, default: 14, step: 2, present: 26 } as const;
const EVENT = 'dplab:font-size';

/** The presenter view (presenter.ts) shows projector-sized text without touching the learner's own setting. */
let presenting = false;

function storedSize(): number {
  const stored = Number(localStorage.getItem(KEY));
  return Number.isFinite(stored) && stored >= FONT_SIZES.min && stored <= FONT_SIZES.max ? stored : FONT_SIZES.default;
}

export function fontSize(): number {
  return presenting ? Math.max(FONT_SIZES.present, storedSize()) : storedSize();
}

/** Presenter view on or off: terminals and instructions follow at once; the stored size is kept. */
export function setPresentingFontSize(on: boolean): void {
  presenting = on;
  applyFontSize();
}

/** Applies the current size to the page (CSS variable and terminals) without storing anything. */
export function applyFontSize(): void {
  const px = fontSize();
  document.documentElement.style.setProperty('--dplab-font-size', `${px}px`);
  document.dispatchEvent(new CustomEvent(EVENT, { detail: px }));
}

export function setFontSize(px: number): number {
  const clamped = Math.min(FONT_SIZES.max, Math.max(FONT_SIZES.min, Math.round(px)));
  localStorage.setItem(KEY, String(clamped));
  applyFontSize();
  return clamped;
}

export function onFontSizeChange(listener: (px: number) => void): () => void {
  const handler = (ev: Event) => listener((ev as CustomEvent<number>).detail);
  document.addEventListener(EVENT, handler);
  return () => document.removeEventListener(EVENT, handler);
}
