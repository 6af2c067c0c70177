/**
 * Lessons count as read once opened: this page's footer marks /lessons/<slug>/ in this origin's
 * storage (the index pages read it through course-progress.ts). Nothing else; lesson pages load
 * no more than this.
 */
const key = (lesson: string) => `dplab:read:${lesson}`;

export function isRead(lesson: string): boolean {
  try {
    return localStorage.getItem(key(lesson)) !== null;
  } catch {
    return false;
  }
}

export function markRead(lesson: string): void {
  try {
    if (!isRead(lesson)) localStorage.setItem(key(lesson), new Date().toISOString());
  } catch {
    // No storage: the index pages show the lesson as not started, nothing worse.
  }
}

/** The lesson's slug when this path is a lesson page. */
export function lessonOfPath(path: string): string | undefined {
  return /^\/lessons\/([a-z0-9-]+)\/?$/.exec(path)?.[1];
}
