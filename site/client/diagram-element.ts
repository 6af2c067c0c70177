/**
 * <dplab-mermaid> holds a lesson diagram drawn ahead of time (one SVG per colour scheme, CSS
 * shows the page's); this gives it zoom and full-screen buttons. No mermaid here.
 */
import { enhanceDiagram } from './diagram-view.ts';

class DiagramElement extends HTMLElement {
  connectedCallback(): void {
    if (this.dataset.rendered !== undefined) return;
    enhanceDiagram(this, this.dataset.label || 'Diagram');
    this.dataset.rendered = '';
  }
}

if (!customElements.get('dplab-mermaid')) customElements.define('dplab-mermaid', DiagramElement);
