/**
 * A drawn diagram as a reader can use it: never shrunk below readable text (mermaid fits its
 * picture to the box, which put 6 px labels on lesson pages), scrolled sideways when wider than
 * the page, zoom buttons, and a full-screen view. Lessons and the dataplane explorer share it.
 */
import { el } from './dom.ts';

/** The smallest label size we allow, in CSS pixels. */
export const MIN_TEXT_PX = 12;
/** mermaid's own label size (its default `fontSize`), in the SVG's units. */
const MERMAID_FONT_PX = 16;
const MIN_SCALE = MIN_TEXT_PX / MERMAID_FONT_PX;
const MAX_SCALE = 3;
const ZOOM_STEP = 1.25;

function naturalWidth(svg: SVGSVGElement): number {
  const vb = svg.viewBox?.baseVal;
  if (vb && vb.width) return vb.width;
  return parseFloat(svg.style.maxWidth) || svg.getBoundingClientRect().width || 600;
}

/** Size `svg` at `scale` of its natural size (1 = mermaid's 16 px labels). */
function applyScale(svg: SVGSVGElement, scale: number): void {
  const w = naturalWidth(svg);
  svg.removeAttribute('width');
  svg.removeAttribute('height');
  svg.style.maxWidth = 'none';
  // Up, never down: a rounded-down width would put labels a hair under the minimum.
  svg.style.width = `${Math.ceil(w * scale)}px`;
  svg.style.height = 'auto';
  svg.dataset.scale = scale.toFixed(3);
}

function fitScale(svg: SVGSVGElement, room: number): number {
  return Math.min(1, Math.max(MIN_SCALE, room / naturalWidth(svg)));
}

/** Replace `target`'s content with the diagram drawn from `svgText`, its zoom buttons and a full-screen button. */
export function showDiagram(target: HTMLElement, svgText: string, label: string): void {
  const view = el('div', { class: 'dplab-diagram-view', role: 'img', 'aria-label': label, tabindex: '0' });
  view.innerHTML = svgText;
  target.replaceChildren(view);
  enhanceDiagram(target, label);
}

/** The drawing a reader sees: of a view's drawings (one per colour scheme), the one displayed. */
function shown(svgs: readonly SVGSVGElement[]): SVGSVGElement {
  return svgs.find((s) => s.getClientRects().length > 0) ?? svgs[0];
}

/**
 * Give the diagram already in `target` (a `.dplab-diagram-view` holding one SVG, or one per
 * colour scheme of which CSS shows one) zoom buttons and a full-screen button, and size it so
 * its labels stay readable. Lessons' diagrams arrive drawn in the page; the explorer's come
 * through showDiagram.
 */
export function enhanceDiagram(target: HTMLElement, label: string): void {
  const view = target.querySelector<HTMLElement>('.dplab-diagram-view');
  const svgs = view ? [...view.querySelectorAll<SVGSVGElement>(':scope > svg')] : [];
  if (!view || !svgs.length) return;
  const zoomOut = el(
    'button',
    { type: 'button', class: 'dplab-diagram-button' },
    el('span', { 'aria-hidden': 'true' }, '−'),
    el('span', { class: 'sr-only' }, 'Zoom out'),
  );
  const zoomIn = el(
    'button',
    { type: 'button', class: 'dplab-diagram-button' },
    el('span', { 'aria-hidden': 'true' }, '+'),
    el('span', { class: 'sr-only' }, 'Zoom in'),
  );
  const full = el('button', { type: 'button', class: 'dplab-diagram-button' }, 'Full screen');
  const tools = el('div', { class: 'dplab-diagram-tools', role: 'group', 'aria-label': 'Diagram view' }, zoomOut, zoomIn, full);
  target.insertBefore(tools, view);
  // The room without the drawing in it: in a grid or flex column the drawing at its natural size
  // would widen the very box it is measured against.
  view.hidden = true;
  const room = target.clientWidth || 600;
  view.hidden = false;
  let scale = fitScale(svgs[0], room);
  const set = (s: number) => {
    scale = Math.min(MAX_SCALE, Math.max(MIN_SCALE, s));
    for (const svg of svgs) applyScale(svg, scale);
    zoomOut.disabled = scale <= MIN_SCALE + 1e-6;
    zoomIn.disabled = scale >= MAX_SCALE - 1e-6;
  };
  set(scale);
  zoomOut.addEventListener('click', () => set(scale / ZOOM_STEP));
  zoomIn.addEventListener('click', () => set(scale * ZOOM_STEP));
  full.addEventListener('click', () => openFullScreen(shown(svgs), label));
}

/** The diagram alone in a modal dialog as large as the window allows (Esc or Close ends it). */
function openFullScreen(svg: SVGSVGElement, label: string): void {
  const copy = svg.cloneNode(true) as SVGSVGElement;
  // Ids inside mermaid's SVG (markers, styles) must stay unique on the page.
  const close = el('button', { type: 'button', class: 'dplab-diagram-button' }, 'Close');
  const body = el('div', { class: 'dplab-diagram-view', role: 'img', 'aria-label': label, tabindex: '0' }, copy);
  const dialog = el(
    'dialog',
    { class: 'dplab-diagram-dialog', 'aria-label': label },
    el('div', { class: 'dplab-diagram-tools' }, close),
    body,
  );
  document.body.append(dialog);
  close.addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => dialog.remove());
  dialog.showModal();
  // The dialog fills the window (course.css); the drawing takes the room under its Close button,
  // as large as both sides allow. Only a drawing taller than the window at 12 px labels scrolls, down.
  const w = naturalWidth(copy);
  const h = copy.viewBox?.baseVal?.height || w;
  const room = Math.min(body.clientWidth / w, body.clientHeight / h);
  applyScale(copy, Math.max(MIN_SCALE, Math.min(MAX_SCALE, room)));
  close.focus();
}
