/** The set-up most browser test files share, as vitest hooks (kept out of harness.ts, which runs outside vitest too). */
import { afterAll, beforeAll } from 'vitest';
import { launchBrowser, startCourse, type Browser, type Course } from './harness.ts';

/**
 * A course and one Chromium for a describe block: started before its tests (the first tab at
 * `viewport`), closed after them. Its fields are there once the block's tests run.
 */
export function courseAndBrowser(viewport = { width: 1280, height: 800 }): { course: Course; browser: Browser } {
  const stage = {} as { course: Course; browser: Browser };
  beforeAll(async () => {
    stage.course = await startCourse();
    stage.browser = await launchBrowser();
    await stage.browser.page.setViewportSize(viewport);
  });
  afterAll(async () => {
    await stage.browser?.close();
    await stage.course?.close();
  });
  return stage;
}
