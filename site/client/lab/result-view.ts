/** Renders a check result (or an API problem) into a step's result region, as DOM, never as HTML strings. */
import type { CheckResult as WireCheckResult } from '../../../scripts/wire/checks.ts';
import { richText } from '../rich-text.ts';

/** The part of a check result (scripts/wire/checks.ts) this view shows; notes fill in the same fields. */
export type CheckResult = Pick<WireCheckResult, 'status' | 'message' | 'facts' | 'fix' | 'details'>;

const HEADLINE: Record<CheckResult['status'], string> = { pass: 'Done.', fail: 'Not yet.', error: 'Could not check.' };

export { richText } from '../rich-text.ts';

/** `headline` replaces the check's own ("Could not apply the solution:") when the problem came from another action. */
export function showResult(region: HTMLElement, r: CheckResult, headline?: string): void {
  region.replaceChildren();
  region.dataset.status = r.status;
  const p = document.createElement('p');
  const strong = document.createElement('strong');
  strong.textContent = `${headline ?? HEADLINE[r.status]} `;
  p.append(strong, richText(r.message));
  region.append(p);
  if (r.fix) {
    const fix = document.createElement('p');
    fix.className = 'dplab-result-fix';
    fix.append('Fix: ', richText(r.fix));
    region.append(fix);
  }
  if (r.facts.length) {
    const table = document.createElement('table');
    const head = table.createTHead().insertRow();
    for (const h of ['', 'What', 'Expected', 'Seen']) {
      const th = document.createElement('th');
      th.textContent = h;
      head.append(th);
    }
    const body = table.createTBody();
    for (const f of r.facts) {
      const row = body.insertRow();
      const mark = row.insertCell();
      mark.textContent = f.ok ? '✓' : '✗';
      mark.className = f.ok ? 'ok' : 'bad';
      mark.setAttribute('aria-label', f.ok ? 'as expected' : 'not as expected');
      row.insertCell().textContent = f.label;
      row.insertCell().textContent = f.expected;
      row.insertCell().textContent = f.seen;
    }
    region.append(table);
  }
  if (r.details) {
    const d = document.createElement('details');
    const s = document.createElement('summary');
    s.textContent = 'Details';
    const pre = document.createElement('pre');
    pre.textContent = r.details;
    d.append(s, pre);
    region.append(d);
  }
}

/** Empties a result region, and its status with it: an empty region claims no pass or fail. */
export function clearResult(region: HTMLElement): void {
  region.replaceChildren();
  delete region.dataset.status;
}

/** A message that is not a check result: busy, runner offline, a solve's outcome. */
export function showNote(
  region: HTMLElement,
  status: CheckResult['status'] | 'busy',
  message: string,
  fix?: string,
  headline?: string,
): void {
  if (status === 'busy') {
    region.replaceChildren(message);
    region.dataset.status = 'busy';
    return;
  }
  showResult(region, { status, message, facts: [], fix }, headline);
}
