/**
 * The mark a page with the lab workspace carries in its <head>: LabLayout's page-wide rules
 * (no Starlight sidebar beside the workspace, no page title panel, a page that never scrolls)
 * key on it, so they hold from the first paint. Keyed on the workspace element itself
 * (`html:has(.dplab-ws)`), they waited for it to be parsed, and a busy machine painted the
 * sidebar first. A head entry for StarlightPage's `frontmatter.head`.
 */
export const WORKSPACE_HEAD = { tag: 'meta', attrs: { name: 'dplab-workspace', content: 'lab workspace' } } as const;
