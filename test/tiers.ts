/**
 * Which tier runs which test files, where a folder or a name does not say it.
 *
 * The whole-course audits go through every page, size, theme and font set, or walk the course from
 * its first page to its last. On two cores they took about half of `npm test`'s time, so they are
 * their own tier, `npm run test:audit`, which `.ci/run` runs after `npm test`. Run it after a change
 * to the site's layout, styles, lessons or diagrams (README "Which tier for which change").
 */
export const AUDIT_FILES = [
  // axe-core on every page, light and dark
  'e2e/axe.test.ts',
  // nothing clipped on any page at 1280×800 and 390×844, light and dark
  'e2e/visibility.test.ts',
  // every diagram on every lesson: its labels, its column, zoom and full screen
  'e2e/diagrams.test.ts',
  // Next from the first page to the last, the index pages, each lab's links and summary
  'e2e/course-spine.test.ts',
  // the workspace at each size, theme and font set
  'e2e/workspace-layout.test.ts',
  // the no-Docker replay at each size and theme
  'e2e/replay-views.test.ts',
  // a traced path on the explorer at each size and theme
  'e2e/trace-view-audit.test.ts',
  // the line that says the next lab's cluster is starting ahead, at each size and theme
  'e2e/warm-next-audit.test.ts',
];
