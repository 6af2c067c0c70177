/**
 * Where the learner stands on each lesson and lab, for the index pages: a lab is done when every
 * step passed on one of its modes, partly done when any step passed; a lesson is done when read
 * and its labs are done, partly when read or any of its labs begun. Lab progress is the lab
 * page's (localStorage, joined with the runner's /api/progress); reading is lesson-read.ts's.
 */
import { progressFileSchema } from '../../scripts/wire/progress.ts';
import { loadLocal, merge, type LabProgress } from './lab/progress-store.ts';
import { isRead } from './lesson-read.ts';
import { api } from './runner-api.ts';

export type Standing = 'done' | 'partly' | 'not-started';

export interface LabStanding {
  standing: Standing;
  /** The most steps passed on any one mode. */
  passed: number;
  total: number;
}

export function labStanding(progress: LabProgress, steps: readonly string[]): LabStanding {
  const passed = Math.max(0, ...Object.values(progress.passed).map((ids) => steps.filter((s) => ids.includes(s)).length));
  const standing = steps.length > 0 && passed === steps.length ? 'done' : passed > 0 ? 'partly' : 'not-started';
  return { standing, passed, total: steps.length };
}

export function lessonStanding(read: boolean, labs: readonly LabStanding[]): Standing {
  if (read && labs.every((l) => l.standing === 'done')) return 'done';
  return read || labs.some((l) => l.standing !== 'not-started') ? 'partly' : 'not-started';
}

const ICON: Record<Standing, string> = { done: '✓', partly: '◐', 'not-started': '○' };

function show(el: HTMLElement, standing: Standing, text: string): void {
  el.dataset.standing = standing;
  const icon = document.createElement('span');
  icon.setAttribute('aria-hidden', 'true');
  icon.className = 'dplab-standing-icon';
  icon.textContent = ICON[standing];
  el.replaceChildren(icon, ` ${text}`);
}

function labText(s: LabStanding): string {
  if (s.standing === 'done') return 'Done';
  if (s.standing === 'partly') return `Partly done: ${s.passed} of ${s.total} steps`;
  return 'Not started';
}

/** Fill every `[data-lab-standing]` and `[data-lesson-standing]` under `root`. */
export async function showStandings(root: ParentNode = document): Promise<void> {
  let remote: Record<string, LabProgress> = {};
  const paint = () => {
    const labs = new Map<string, LabStanding>();
    root.querySelectorAll<HTMLElement>('[data-lab-standing]').forEach((el) => {
      const id = el.dataset.labStanding!;
      const s = labStanding(merge(loadLocal(id), remote[id]), (el.dataset.steps ?? '').split(' ').filter(Boolean));
      labs.set(id, s);
      show(el, s.standing, labText(s));
    });
    root.querySelectorAll<HTMLElement>('[data-lesson-standing]').forEach((el) => {
      const read = isRead(el.dataset.lessonStanding!);
      const own = (el.dataset.labs ?? '').split(' ').filter(Boolean);
      const standing = lessonStanding(
        read,
        own.map((id) => labs.get(id) ?? { standing: 'not-started', passed: 0, total: 0 }),
      );
      const text =
        standing === 'done' ? 'Done' : standing === 'partly' ? (read ? 'Read; labs to do' : 'Labs begun; not read yet') : 'Not started';
      show(el, standing, text);
    });
  };
  paint();
  try {
    remote = (await api('/api/progress', progressFileSchema())).labs;
    paint();
  } catch {
    // No runner: this browser's own record is all there is.
  }
}
