/**
 * <dplab-mermaid> renders the mermaid source it contains. mermaid is imported on first use,
 * so it is a separate chunk that only diagram pages fetch.
 */
import { showDiagram } from './diagram-view.ts';

let counter = 0;

function currentTheme(): 'dark' | 'default' {
  return document.documentElement.dataset.theme === 'light' ? 'default' : 'dark';
}

/** The one mermaid loader: SVG text for `source`, importing mermaid on first use. Throws on bad source. */
export async function renderMermaid(source: string): Promise<string> {
  const { default: mermaid } = await import('mermaid');
  const theme = currentTheme();
  // mermaid's dark theme puts edge labels in grey on a grey box (contrast below 4.5:1).
  const themeVariables =
    theme === 'dark'
      ? { edgeLabelBackground: '#1f2430', labelTextColor: '#e6edf3', textColor: '#e6edf3' }
      : { edgeLabelBackground: '#ffffff' };
  mermaid.initialize({ startOnLoad: false, theme, themeVariables, securityLevel: 'strict' });
  const { svg } = await mermaid.render(`dplab-mermaid-${++counter}`, source);
  return svg;
}

class MermaidElement extends HTMLElement {
  async connectedCallback(): Promise<void> {
    const sourceEl = this.querySelector('.dplab-mermaid-source');
    const source = sourceEl?.textContent ?? '';
    if (!source.trim() || this.dataset.rendered !== undefined) return;
    try {
      const svg = await renderMermaid(source);
      const holder = document.createElement('div');
      holder.className = 'dplab-mermaid-svg';
      this.append(holder);
      showDiagram(holder, svg, this.dataset.label || 'Diagram');
      this.dataset.rendered = '';
    } catch (err) {
      // Keep the source visible and say why there is no picture.
      this.dataset.error = err instanceof Error ? err.message : String(err);
    }
  }
}

if (!customElements.get('dplab-mermaid')) customElements.define('dplab-mermaid', MermaidElement);
