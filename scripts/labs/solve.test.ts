// "Apply solution" in a workshop seat runs its `bash -c` as the seat's own user, in the learner's
// workspace: what the script writes is the learner's, and a link the learner planted there leads
// only where the learner could go anyway (root would write through it).
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterHandle } from '../clusters/handle.ts';
import { applyEnv } from '../../test/fixtures/doubles.ts';
import { applySolution } from './solve.ts';
import type { Lab, Step } from './schema.ts';

const asRoot = process.platform === 'linux' && process.getuid?.() === 0;

describe("a solution's programs", () => {
  const top = mkdtempSync(join(tmpdir(), 'dplab-solve-path-'));
  // Set when it runs, not when the file is read: the seat's suite below sets a shell user as it is read.
  let restore = () => {};
  let user: string | undefined;
  beforeAll(() => {
    restore = applyEnv({ DPLAB_STATE_DIR: join(top, 'state') });
    user = process.env.DPLAB_SHELL_USER;
    delete process.env.DPLAB_SHELL_USER;
  });
  afterAll(() => {
    restore();
    if (user !== undefined) process.env.DPLAB_SHELL_USER = user;
    rmSync(top, { recursive: true, force: true });
  });

  it("come from the cluster handle's pathFirst first (the sim's kubectl), and the runner's PATH stays as it was", async () => {
    const bin = join(top, 'sim-bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'kubectl'), '#!/bin/sh\necho "sim kubectl $KUBECONFIG"\n', { mode: 0o755 });
    const lab = { id: 'l', namespace: 'lab-l', setup: { workspace: [] } } as unknown as Lab;
    const step = { id: 's', solution: { commands: ['kubectl get pods'] } } as unknown as Step;
    const kubeconfig = join(top, 'kubeconfig');
    writeFileSync(kubeconfig, '');
    const cluster = { mode: 'iptables', name: 'dplab-iptables', kubeconfig, pathFirst: [bin] } as unknown as ClusterHandle;
    const before = process.env.PATH;
    const r = await applySolution(lab, step, 'iptables', { cluster });
    expect(r.output).toBe(`sim kubectl ${kubeconfig}\n`);
    expect(process.env.PATH).toBe(before);
  });
});

describe.runIf(asRoot)('a solution in a seat with its own user', () => {
  const top = mkdtempSync(join(tmpdir(), 'dplab-solve-user-'));
  const seat = join(top, 'seat');
  const uid = 2_000_009_002;
  const restore = applyEnv({ DPLAB_STATE_DIR: seat, DPLAB_SHELL_USER: `${uid}:${uid}` });
  afterAll(() => {
    rmSync(top, { recursive: true, force: true });
    restore();
  });

  it("runs as the seat's user and cannot write through the learner's link to a root-owned file", async () => {
    chmodSync(top, 0o711);
    mkdirSync(join(seat, 'workspace'), { recursive: true });
    const kubeconfig = join(top, 'kubeconfig');
    writeFileSync(kubeconfig, '');
    const rootFile = join(top, 'root.txt');
    writeFileSync(rootFile, 'root only\n', { mode: 0o644 });
    symlinkSync(rootFile, join(seat, 'workspace', 'notes.txt'));
    const lab = { id: 'l', namespace: 'lab-l', setup: { workspace: [] } } as unknown as Lab;
    const step = { id: 's', solution: { commands: ['id -u > who.txt', 'echo overwritten > notes.txt || true'] } } as unknown as Step;
    const cluster = { mode: 'iptables', name: 'dplab-iptables', kubeconfig } as unknown as ClusterHandle;
    await applySolution(lab, step, 'iptables', { cluster });
    expect(readFileSync(join(seat, 'workspace', 'who.txt'), 'utf8').trim()).toBe(String(uid));
    expect(statSync(join(seat, 'workspace', 'who.txt')).uid).toBe(uid);
    expect(readFileSync(rootFile, 'utf8')).toBe('root only\n');
  });
});
