/**
 * Builds Go programs from small wrapper modules (committed as go.mod/go.sum only) with the local
 * Go toolchain into a cache outside the repository. The sim provider's components (components.ts)
 * go to `${DPLAB_SIM_CACHE:-~/.cache/dplab/sim}/k8s-v<version>/bin/`; the kind test environment
 * (test/kind/) builds its own list with the same function.
 * A component is rebuilt only when its module (go.mod, go.sum, .go files), package, flags or the
 * Go version changed; a stamp file next to each binary records that hash. Builds run under
 * `nice -n 10`, one after the other (they share Go's build cache), with a progress line each; a
 * lock per component lets two dplab processes share one cache without building anything twice.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { CommandError, run } from '../base/exec.ts';
import { DplabError } from '../base/errors.ts';
import { projectRoot } from '../base/paths.ts';
import { KUBERNETES_VERSION } from '../base/versions.ts';
import { SIM_COMPONENTS, type GoComponent } from './components.ts';
import { withFileLock } from '../base/file-lock.ts';

/** A cold build needs the module cache (~1.5 GiB) plus Go's build cache (~3 GiB) plus the binaries. */
const MIN_FREE_BYTES = 6 * 1024 ** 3;
/** One component on a cold cache, on two shared cores, can take long; this only stops a hang. */
const BUILD_TIMEOUT_MS = 90 * 60_000;

export interface BuildOptions {
  onProgress?: (line: string) => void;
  signal?: AbortSignal;
  /** Only these components (default: all). */
  only?: readonly string[];
  /** What the missing-Go error says needs it ("The sim provider builds Kubernetes from source"). */
  purpose?: string;
}

function simCacheDir(): string {
  return resolve(process.env.DPLAB_SIM_CACHE ?? join(homedir(), '.cache', 'dplab', 'sim'));
}

export function simBinDir(): string {
  return join(simCacheDir(), `k8s-v${KUBERNETES_VERSION}`, 'bin');
}

function moduleFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'testdata' && !entry.name.startsWith('.')) out.push(...moduleFiles(p));
    } else if (/^(go\.mod|go\.sum)$|\.go$/.test(entry.name)) out.push(p);
  }
  return out;
}

/** What decides whether a built binary is still the right one. */
function componentHash(c: GoComponent, goVersion: string): string {
  const h = createHash('sha256');
  h.update(
    JSON.stringify({ pkg: c.pkg, ldflags: c.ldflags ?? [], tags: c.tags ?? [], cgo: c.cgo ?? false, version: c.version, goVersion }),
  );
  const dir = join(projectRoot, c.moduleDir);
  for (const f of moduleFiles(dir)) h.update(f.slice(dir.length)).update(readFileSync(f));
  return h.digest('hex').slice(0, 16);
}

const stampPath = (binDir: string, name: string) => join(binDir, `.${name}.stamp`);

function isBuilt(binDir: string, c: GoComponent, hash: string): boolean {
  const bin = join(binDir, c.name);
  if (!existsSync(bin) || !existsSync(stampPath(binDir, c.name))) return false;
  return readFileSync(stampPath(binDir, c.name), 'utf8').trim() === hash && statSync(bin).size > 0;
}

async function goVersion(purpose: string, signal?: AbortSignal): Promise<string> {
  try {
    const r = await run('go', ['env', 'GOVERSION'], { timeoutMs: 30_000, signal });
    return r.stdout.trim();
  } catch (err) {
    if (err instanceof CommandError && err.kind === 'tool-missing') {
      throw new DplabError(`${purpose}, but the Go toolchain (\`go\`) is not on PATH.`, {
        fix: "Install Go 1.25 or newer (https://go.dev/dl/; Debian 12's golang package is too old) and put `go` on PATH.",
        status: 409,
        cause: err,
      });
    }
    throw err;
  }
}

function checkDisk(dir: string, what: string): void {
  mkdirSync(dir, { recursive: true });
  const s = statfsSync(dir);
  const free = s.bavail * s.bsize;
  if (free < MIN_FREE_BYTES) {
    throw new DplabError(
      `Only ${(free / 1024 ** 3).toFixed(1)} GiB are free under ${dir}; building ${what} needs about ${MIN_FREE_BYTES / 1024 ** 3} GiB.`,
      {
        fix: 'Free disk space (or point DPLAB_SIM_CACHE, GOMODCACHE and GOCACHE at a bigger disk), then try again.',
        status: 409,
      },
    );
  }
}

/** Turn a failed `go build` into the error a person can act on. */
function buildFailure(c: GoComponent, err: unknown): DplabError {
  if (!(err instanceof CommandError) || err.kind === 'aborted') return err instanceof DplabError ? err : new DplabError(String(err));
  const text = `${err.stderr}\n${err.stdout}`;
  if (/no space left on device/i.test(text)) {
    return new DplabError(`Building ${c.name} ran out of disk space.`, {
      fix: 'Free disk space (Go caches: `go clean -cache`), then try again.',
      details: err.details,
      status: 409,
    });
  }
  if (/proxy\.golang\.org|dial tcp|i\/o timeout|no such host|module lookup disabled|TLS handshake timeout|connection refused/i.test(text)) {
    return new DplabError(`Building ${c.name} needs Go modules it could not download: the Go module proxy is not reachable.`, {
      fix: `Check the network and \`go env GOPROXY\` (${process.env.GOPROXY ?? 'https://proxy.golang.org,direct'}); behind a proxy set HTTPS_PROXY, or set GOPROXY to a reachable mirror.`,
      details: err.details,
      status: 502,
    });
  }
  return new DplabError(`Building ${c.name} (${c.pkg}) failed.`, {
    fix: `Run \`cd ${c.moduleDir} && go build ${c.pkg}\` to see the compiler's output.`,
    details: err.details,
    cause: err,
  });
}

export interface BuildResult {
  binDir: string;
  built: string[];
  reused: string[];
}

/** Build (or reuse) every sim component; resolves with the folder holding the binaries. */
export function ensureSimBinaries(opts: BuildOptions = {}): Promise<BuildResult> {
  return ensureGoBinaries(SIM_COMPONENTS, simBinDir(), { purpose: 'The sim provider builds Kubernetes from source', ...opts });
}

/** Build (or reuse) these components into binDir. */
export async function ensureGoBinaries(list: readonly GoComponent[], binDir: string, opts: BuildOptions = {}): Promise<BuildResult> {
  const say = opts.onProgress ?? (() => undefined);
  const components = list.filter((c) => !opts.only || opts.only.includes(c.name));
  const gov = await goVersion(opts.purpose ?? 'Building these programs needs Go', opts.signal);
  const todo = components
    .map((c) => ({ c, hash: componentHash(c, gov) }))
    .filter(({ c, hash }) => {
      if (!isBuilt(binDir, c, hash)) return true;
      say(`${c.name} ${c.version}: already built`);
      return false;
    });
  const reused = components.filter((c) => !todo.some((t) => t.c === c)).map((c) => c.name);
  if (todo.length === 0) return { binDir, built: [], reused };
  checkDisk(binDir, todo.map((t) => t.c.name).join(', '));
  const built: string[] = [];
  say(
    `building ${todo.map((t) => t.c.name).join(', ')} with ${gov} into ${binDir} (the first build downloads the modules and compiles for many minutes; later ones reuse Go's caches)`,
  );
  for (const [i, { c, hash }] of todo.entries()) {
    // Another dplab may be building the same component into this cache (the kind test environment
    // beside the sim tier): one builds it, the other waits and takes what it built.
    const did = await withFileLock(
      join(binDir, `.${c.name}.lock`),
      async () => {
        if (isBuilt(binDir, c, hash)) {
          say(`${c.name} ${c.version}: built meanwhile by another dplab`);
          return false;
        }
        await buildOne(c, hash, binDir, `(${i + 1}/${todo.length})`, say, opts.signal);
        return true;
      },
      { signal: opts.signal, onWait: (pid) => say(`${c.name}: another dplab (pid ${pid}) is building it; waiting for it…`) },
    );
    if (did) built.push(c.name);
  }
  return { binDir, built, reused };
}

async function buildOne(
  c: GoComponent,
  hash: string,
  binDir: string,
  counter: string,
  say: (line: string) => void,
  signal?: AbortSignal,
): Promise<void> {
  const started = Date.now();
  say(`building ${c.name} ${c.version} ${counter}…`);
  const tmp = join(binDir, `.${c.name}.${process.pid}.tmp`);
  const tags = c.tags?.length ? ['-tags', c.tags.join(',')] : [];
  const args = [
    '-n',
    '10',
    'go',
    'build',
    '-trimpath',
    ...tags,
    '-o',
    tmp,
    '-ldflags',
    ['-s', '-w', ...(c.ldflags ?? [])].join(' '),
    c.pkg,
  ];
  try {
    await run('nice', args, {
      cwd: join(projectRoot, c.moduleDir),
      timeoutMs: BUILD_TIMEOUT_MS,
      signal,
      env: { CGO_ENABLED: c.cgo ? '1' : '0' },
    });
  } catch (err) {
    rmSync(tmp, { force: true });
    throw buildFailure(c, err);
  }
  renameSync(tmp, join(binDir, c.name));
  writeFileSync(stampPath(binDir, c.name), `${hash}\n`);
  say(`${c.name} built in ${Math.round((Date.now() - started) / 1000)} s`);
}
