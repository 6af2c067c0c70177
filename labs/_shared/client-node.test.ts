// Per-node client state is read on the client pod's node: the snippets that show IPVS
// connection entries or the `recent` module's lists ask Kubernetes where `client` runs instead
// of assuming the first worker (the scheduler may put the client on either worker).
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { requireLab } from '../../scripts/labs/registry.ts';
import { clientNode } from './workload.ts';

const PER_NODE_STATE = /ip_vs_conn|xt_recent|ipvsadm -Lnc/;

describe('snippets that read per-node client state', () => {
  const cases = ['session-affinity', 'ipvs-inspect'].flatMap((id) => {
    const lab = requireLab(id);
    return lab.steps.flatMap((s) =>
      s.snippets.filter((sn) => PER_NODE_STATE.test(sn.command)).map((sn) => [id, sn.label, sn.command, lab.namespace] as const),
    );
  });

  it('exist', () => expect(cases.length).toBeGreaterThanOrEqual(3));

  it.each(cases)('%s: "%s" runs on the client\'s node', (_id, _label, command, ns) => {
    expect(command).toContain(`docker exec ${clientNode(ns)}`);
  });

  it('clientNode() expands to the node kubectl reports for the client pod', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dplab-cn-'));
    try {
      writeFileSync(
        join(dir, 'kubectl'),
        '#!/bin/sh\n[ "$*" = "-n lab-x get pod client -o jsonpath={.spec.nodeName}" ] && printf dplab-ipvs-worker2\n',
      );
      chmodSync(join(dir, 'kubectl'), 0o755);
      const out = execFileSync('sh', ['-c', `echo ${clientNode('lab-x')}`], {
        encoding: 'utf8',
        env: { ...process.env, PATH: `${dir}:${process.env.PATH}` },
      });
      expect(out.trim()).toBe('dplab-ipvs-worker2');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
