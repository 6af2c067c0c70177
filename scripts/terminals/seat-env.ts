/**
 * The environment a workshop seat's processes start from: an allow-list, never the operator's
 * environment minus a few names. Whatever the instructor's shell held (DPLAB_PORTAL_TOKEN, cloud
 * keys, SSH agents, a canary) is not copied, because only the names below are. A seat's runner
 * gets the host settings it needs to run clusters plus the seat's own DPLAB_* values (given by
 * the portal's seat backend); a seat's shell gets the same minus the runner's own secrets.
 */

/** Host settings a runner or a shell needs to work: where programs are, language, terminal, Docker. */
const HOST_NAMES = new Set([
  'PATH',
  'HOME',
  'LANG',
  'LANGUAGE',
  'TZ',
  'TERM',
  'TMPDIR',
  'USER',
  'LOGNAME',
  'SHELL',
  'DOCKER_HOST',
  'KIND_EXPERIMENTAL_PROVIDER',
  'GOPROXY',
]);

/** The runner's own settings an operator may set for every seat; none of them is a credential. */
const RUNNER_SETTINGS = new Set([
  'DPLAB_PROVIDER',
  'DPLAB_KIND_OVERLAY',
  'DPLAB_TIMEOUT_FACTOR',
  'DPLAB_SIM_CACHE',
  'DPLAB_SHELL',
  'DPLAB_SHELL_NORC',
  'DPLAB_CHECK_DEADLINE_MS',
  'DPLAB_TSX',
]);

/** Names that are secrets wherever they appear: never in a seat's processes (the seat's runner token is added back by name). */
const SECRETS = new Set(['DPLAB_TOKEN', 'DPLAB_PORTAL_TOKEN', 'DPLAB_VIEWER_TOKEN']);

function allowed(name: string): boolean {
  return HOST_NAMES.has(name) || RUNNER_SETTINGS.has(name) || name.startsWith('LC_');
}

/** The part of the operator's environment a seat's runner may start with. */
export function seatBaseEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && allowed(k) && !SECRETS.has(k)) out[k] = v;
  return out;
}

/**
 * A seat shell's environment from its runner's: the allowed host names and the seat's own DPLAB_*
 * values (its folder, its seat id, the settings the portal gave it), never a token.
 */
export function seatShellEnv(env: NodeJS.ProcessEnv, drop: readonly string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env))
    if (v !== undefined && (allowed(k) || k.startsWith('DPLAB_')) && !SECRETS.has(k) && !drop.includes(k)) out[k] = v;
  return out;
}
