/**
 * The environment a lab shell starts with: KUBECONFIG of the lab's cluster (never the user's
 * ~/.kube/config) and a prompt that shows the mode, layered over the user's own shell setup.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { kubeconfigPath, clusterName, type Mode } from '../clusters/modes.ts';
import { stateDir, workspaceDir } from '../paths.ts';

export interface ShellLaunch {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

export function userShell(): string {
  const fromEnv = process.env.DPLAB_SHELL ?? process.env.SHELL;
  return fromEnv && fromEnv.startsWith('/') ? fromEnv : '/bin/bash';
}

function promptTag(mode: Mode | null): string {
  return mode ? `(dplab:${mode}) ` : '(dplab) ';
}

/**
 * Small rc files that source the user's own (unless DPLAB_SHELL_NORC=1: a clean shell, which
 * the tests use so a slow or locked ~/.bashrc cannot stall them) and then prefix the prompt.
 */
function writeRcFiles(mode: Mode | null): { bashrc: string; zdotdir: string } {
  const dir = join(stateDir(), 'shell', mode ?? 'none');
  mkdirSync(dir, { recursive: true });
  const tag = promptTag(mode);
  const own = process.env.DPLAB_SHELL_NORC !== '1';
  const bashrc = join(dir, 'bashrc');
  writeFileSync(bashrc, `${own ? '[ -f ~/.bashrc ] && . ~/.bashrc\n' : ''}PS1=${JSON.stringify(tag)}"\${PS1:-\\w \\$ }"\n`);
  const zdotdir = join(dir, 'zsh');
  mkdirSync(zdotdir, { recursive: true });
  writeFileSync(join(zdotdir, '.zshrc'), `${own ? '[ -f ~/.zshrc ] && ZDOTDIR=~ . ~/.zshrc\n' : ''}PROMPT=${JSON.stringify(tag)}"\${PROMPT:-%~ %# }"\n`);
  return { bashrc, zdotdir };
}

export function shellLaunch(mode: Mode | null): ShellLaunch {
  const cwd = workspaceDir();
  mkdirSync(cwd, { recursive: true });
  const file = userShell();
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  // The runner's own secrets and dev-server variables are not the learner's business.
  delete env.DPLAB_TOKEN;
  env.TERM = 'xterm-256color';
  env.COLORTERM = 'truecolor';
  env.DPLAB = '1';
  if (mode) {
    env.KUBECONFIG = kubeconfigPath(mode);
    env.DPLAB_MODE = mode;
    env.DPLAB_CLUSTER = clusterName(mode);
  } else {
    // A shell without a lab must not act on whatever cluster ~/.kube/config points at by accident.
    delete env.KUBECONFIG;
  }
  const { bashrc, zdotdir } = writeRcFiles(mode);
  const name = basename(file);
  if (name === 'bash') return { file, args: ['--rcfile', bashrc, '-i'], cwd, env };
  if (name === 'zsh') return { file, args: ['-i'], cwd, env: { ...env, ZDOTDIR: zdotdir } };
  env.PS1 = `${promptTag(mode)}$ `;
  return { file, args: ['-i'], cwd, env };
}
