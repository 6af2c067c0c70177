/**
 * Font sets a browser test can run Chromium under, so that a layout is tested against more than
 * the fonts of the machine it happens to run on. Chromium on Linux finds its fonts through
 * fontconfig, and `FONTCONFIG_FILE` names the configuration it reads: one that lists only some
 * font folders, plus the system's rules (the aliases `sans-serif` and `monospace`, the
 * metric-compatible substitutes such as Arial → Liberation Sans), makes Chromium see only those.
 *
 * Why it matters: the page's text is Starlight's `system-ui, …` and the terminal's
 * `ui-monospace, …, monospace`, and on Linux both come down to what fontconfig prefers for
 * `sans-serif` and `monospace`. Its 60-latin.conf prefers Noto Sans and Noto Sans Mono over the
 * DejaVu faces whenever they are installed (fonts-noto-core, fonts-noto-mono, which other
 * packages pull in), and DejaVu (fonts-dejavu-core, what fontconfig itself depends on) otherwise.
 * At 14 px a terminal row is 22 px in Noto Sans Mono and 19 px in DejaVu Sans Mono, so the same
 * window has 13 % fewer terminal rows; DejaVu Sans sets the bar's text ~7 % wider than Noto Sans.
 * (Arial → Liberation Sans, from fonts-liberation, which Chromium only recommends, is never
 * reached: `system-ui` comes first.)
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface FontSet {
  /** How a test names it: "machine", "DejaVu + Noto". */
  name: string;
  /** For launchBrowser({ env }): none for the machine's own fonts. */
  env?: Record<string, string>;
  /** Why the set cannot be made here (its fonts are not installed); its tests are skipped. */
  missing?: string;
  /** What fontconfig makes of the generic families under this set, for the test's log. */
  matches?: Record<string, string>;
}

/** Besides the machine's own fonts: the two families a Linux machine's Chromium ends up with. */
const SETS: { name: string; folders: RegExp[] }[] = [
  // Debian's chromium with its recommends, no Noto: DejaVu Sans (wide) for text, DejaVu Sans Mono (19 px rows).
  { name: 'DejaVu + Liberation', folders: [/dejavu/i, /liberation/i] },
  // With the Noto fonts other packages bring: Noto Sans for text, Noto Sans Mono (22 px rows) where fonts-noto-mono is there.
  { name: 'DejaVu + Noto', folders: [/dejavu/i, /noto/i] },
];

const CONF_D = '/etc/fonts/conf.d';

function fc(args: string[], env: NodeJS.ProcessEnv = process.env): string | undefined {
  try {
    return execFileSync(args[0], args.slice(1), { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return undefined;
  }
}

/** Every folder holding a font fontconfig knows of (through the system's configuration). */
function fontFolders(): string[] | undefined {
  const out = fc(['fc-list', '--format', '%{file}\n']);
  if (out === undefined) return undefined;
  return [
    ...new Set(
      out
        .split('\n')
        .filter(Boolean)
        .map((f) => dirname(f)),
    ),
  ].sort();
}

/**
 * The system's rules, without the ones that add folders (50-user.conf adds ~/.fonts and
 * ~/.local/share/fonts, which would let a user's fonts into every set).
 */
function systemRules(): string[] {
  let names: string[];
  try {
    names = readdirSync(CONF_D)
      .filter((n) => n.endsWith('.conf'))
      .sort();
  } catch {
    return [];
  }
  return names.map((n) => join(CONF_D, n)).filter((p) => !/<dir[\s>]/.test(readFileSync(p, 'utf8')));
}

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function generics(env?: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const family of ['sans-serif', 'monospace', 'Arial']) {
    out[family] = (fc(['fc-match', '--format', '%{family[0]}', family], { ...process.env, ...env }) ?? '?').trim();
  }
  return out;
}

let cached: FontSet[] | undefined;

/** The machine's fonts first, then each set whose fonts are installed (the others carry `missing`). */
export function fontSets(): FontSet[] {
  if (cached) return cached;
  const folders = fontFolders();
  // One place per user for the configurations and fontconfig's caches: the same content each run, so the caches stay valid.
  const dir = join(tmpdir(), `dplab-font-sets-${process.getuid?.() ?? 'user'}`);
  mkdirSync(dir, { recursive: true });
  const sets: FontSet[] = [{ name: 'machine', matches: generics() }];
  for (const set of SETS) {
    if (!folders) {
      sets.push({ name: set.name, missing: 'fc-list is not installed (Debian: fontconfig)' });
      continue;
    }
    const chosen = set.folders.map((re) => folders.filter((f) => re.test(f)));
    const absent = set.folders.filter((_, i) => chosen[i].length === 0);
    if (absent.length) {
      sets.push({ name: set.name, missing: `no fonts matching ${absent.join(', ')} are installed` });
      continue;
    }
    const slug = set.name.toLowerCase().replace(/[^a-z0-9]+/g, '-');
    const conf = join(dir, `${slug}.conf`);
    const xml = [
      '<?xml version="1.0"?>',
      '<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">',
      '<fontconfig>',
      ...chosen.flat().map((f) => `  <dir>${escapeXml(f)}</dir>`),
      `  <cachedir>${escapeXml(join(dir, `${slug}-cache`))}</cachedir>`,
      ...systemRules().map((p) => `  <include ignore_missing="yes">${escapeXml(p)}</include>`),
      '</fontconfig>',
      '',
    ].join('\n');
    // Written whole under another name first: a parallel test file may be reading it.
    const part = `${conf}.${process.pid}`;
    writeFileSync(part, xml);
    renameSync(part, conf);
    const env = { FONTCONFIG_FILE: conf };
    sets.push({ name: set.name, env, matches: generics(env) });
  }
  cached = sets;
  return sets;
}
