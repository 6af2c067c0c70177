/**
 * A lab page where no cluster can start (no Docker, daemon down, no kind): the cluster bar says
 * why, with the fix; a note at the top of the instructions points there, and each step offers
 * "Replay the recording": the step's commands, what a real cluster printed, and what Check said
 * before and after, on the step's recordings (GET /api/labs/:lab/steps/:step/replay), each labelled with where and on what
 * it was recorded. Nothing here claims the learner did a step: a replay never marks it done.
 */
import type { ErrorJson } from '../../../scripts/wire/errors.ts';
import { stepReplaySchema, type StepReplay } from '../../../scripts/wire/replay.ts';
import { knownBlocker, onBlocker } from '../cluster-blocker.ts';
import { el } from '../dom.ts';
import { onPageModeChange } from '../page-mode.ts';
import { richText } from '../rich-text.ts';
import { api } from '../runner-api.ts';
import { showNote, showResult } from './result-view.ts';

const BUTTON = 'Replay the recording';
const HIDE = 'Hide the replay';

export class ReplayView {
  constructor(
    private readonly root: HTMLElement,
    private readonly labId: string,
    private readonly mode: () => string,
  ) {}

  connect(): void {
    // The cluster panel says whether this mode's cluster can start here (its status's `blocked`).
    onBlocker(({ mode }) => mode === this.mode() && this.render());
    onPageModeChange(() => this.render());
    this.root.addEventListener('click', (ev) => {
      const button = (ev.target as HTMLElement).closest<HTMLButtonElement>('button[data-replay]');
      if (button && this.root.contains(button)) void this.toggle(button);
    });
    this.render();
  }

  /** Why no cluster of the page's mode can start here, or null (none known). */
  blocker(): ErrorJson | null {
    return knownBlocker(this.mode()) ?? null;
  }

  private render(): void {
    const blocker = this.blocker();
    this.root.toggleAttribute('data-replay', !!blocker);
    this.note(blocker);
    for (const step of this.root.querySelectorAll<HTMLElement>('.dplab-step')) {
      const check = step.querySelector<HTMLElement>('.dplab-check');
      if (!check) continue;
      check.querySelector('button[data-replay]')?.remove();
      check.querySelector('.dplab-replay')?.remove();
      if (!blocker) continue;
      const id = `dplab-replay-${step.dataset.step}`;
      const region = el('div', { class: 'dplab-replay', id, hidden: '' });
      const button = el(
        'button',
        { type: 'button', 'data-replay': step.dataset.step!, 'aria-expanded': 'false', 'aria-controls': id },
        BUTTON,
      );
      check.querySelector('.dplab-check-button')?.after(' ', button);
      check.append(region);
    }
  }

  /**
   * What the page offers instead. The blocker itself, with its fix, is said once, by the cluster
   * bar above (cluster-panel.ts); this note points there and does not repeat it.
   */
  private note(blocker: ErrorJson | null): void {
    const head = this.root.querySelector<HTMLElement>('.dplab-lab-head');
    head?.querySelector('.dplab-blocked')?.remove();
    if (!head || !blocker) return;
    const mode = this.mode();
    head.append(
      el(
        'section',
        { class: 'dplab-blocked', 'aria-labelledby': 'dplab-blocked-title' },
        el('h2', { id: 'dplab-blocked-title' }, `No ${mode} cluster can start on this machine: replay the steps instead`),
        el('p', {}, 'Why, and the fix: the error in the cluster bar above.'),
        el(
          'p',
          {},
          `Until then, “${BUTTON}” under each step shows its commands, what a real ${mode} cluster printed and what Check said there, labelled with where it was recorded. A replay does not mark a step done.`,
        ),
      ),
    );
  }

  private async toggle(button: HTMLButtonElement): Promise<void> {
    const region = this.root.querySelector<HTMLElement>(`#${CSS.escape(button.getAttribute('aria-controls') ?? '')}`);
    if (!region) return;
    const open = button.getAttribute('aria-expanded') !== 'true';
    button.setAttribute('aria-expanded', String(open));
    button.textContent = open ? HIDE : BUTTON;
    region.hidden = !open;
    if (!open || region.dataset.mode === this.mode()) return;
    const mode = this.mode();
    region.dataset.mode = mode;
    region.setAttribute('aria-busy', 'true');
    showNote(region, 'busy', 'Loading the recording…');
    try {
      const step = button.dataset.replay!;
      const r = await api(
        `/api/labs/${encodeURIComponent(this.labId)}/steps/${encodeURIComponent(step)}/replay?mode=${encodeURIComponent(mode)}`,
        stepReplaySchema,
      );
      region.replaceChildren(...replayNodes(r));
      delete region.dataset.status;
    } catch (err) {
      delete region.dataset.mode;
      const e = err as Error & { fix?: string };
      showNote(region, 'error', e.message, e.fix, 'Could not load the recording:');
    } finally {
      region.removeAttribute('aria-busy');
    }
  }
}

/** The replay of one step, in the order it happened: before, the commands, what they printed, after. */
function replayNodes(r: StepReplay): Node[] {
  const before = el('div', { class: 'dplab-result' });
  showResult(before, r.unsolved, 'Check said: not yet.');
  const after = el('div', { class: 'dplab-result' });
  showResult(after, r.solved, 'Check said: done.');
  const sameSource = r.unsolved.source.label === r.solved.source.label;
  const nodes: Node[] = [
    el(
      'p',
      { class: 'dplab-replay-source' },
      el('span', { class: 'dplab-replay-badge' }, 'Recording'),
      ' ',
      `Not your cluster. Recorded on ${r.solved.source.label} (the ${r.mode} mode).`,
    ),
    el('h3', {}, 'Before the step'),
    ...(sameSource ? [] : [el('p', { class: 'dplab-replay-aside' }, `Recorded on ${r.unsolved.source.label}.`)]),
    before,
    el('h3', {}, 'The commands'),
    el('pre', { class: 'dplab-replay-pre', tabindex: '0', 'aria-label': 'The commands' }, el('code', {}, r.commands.join('\n'))),
  ];
  if (r.outputs.length) {
    nodes.push(el('h3', {}, 'What the cluster printed'));
    for (const o of r.outputs) {
      nodes.push(
        el(
          'figure',
          { class: 'dplab-replay-output' },
          el('figcaption', {}, richText(o.label)),
          // Scrolls in its own box, so it takes the keyboard too.
          el('pre', { class: 'dplab-replay-pre', tabindex: '0', 'aria-label': `${o.label.replace(/`/g, '')}, recorded output` }, o.text),
          ...(o.omittedLines ? [el('p', { class: 'dplab-replay-aside' }, `… ${o.omittedLines} more lines not shown.`)] : []),
        ),
      );
    }
  }
  nodes.push(el('h3', {}, 'After them'), after);
  const components = Object.entries(r.solved.source.components);
  if (components.length)
    nodes.push(
      el(
        'details',
        { class: 'dplab-replay-components' },
        el('summary', {}, 'Recorded with'),
        el('dl', {}, ...components.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)])),
      ),
    );
  return nodes;
}
