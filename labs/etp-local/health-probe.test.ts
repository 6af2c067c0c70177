// The health-check snippet, run in a real shell against stand-ins for kubectl, kind, docker and
// curl: one line per node with the HTTP status its health port gave. kube-proxy's health server
// (pkg/proxy/healthcheck/service_health.go, v1.35.0) answers 503 when the node has no local
// endpoint for the Service and 200 when it has.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HEALTH_PROBE } from './lab.ts';

describe('etp-local health-check snippet', () => {
  it("prints 200 for the node with web pods and 503 for the others, reading web-lb's healthCheckNodePort", () => {
    const dir = mkdtempSync(join(tmpdir(), 'dplab-hc-'));
    const tool = (name: string, body: string) => {
      writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
      chmodSync(join(dir, name), 0o755);
    };
    try {
      tool('kubectl', 'case "$*" in *"get service web-lb -o jsonpath={.spec.healthCheckNodePort}"*) printf 31514;; *) exit 1;; esac');
      tool('kind', 'printf "dplab-iptables-control-plane\\ndplab-iptables-worker\\ndplab-iptables-worker2\\n"');
      tool('docker', 'case "$4" in *control-plane) echo 172.18.0.2;; *worker2) echo 172.18.0.4;; *worker) echo 172.18.0.3;; esac');
      tool(
        'curl',
        'for a; do case "$a" in http://172.18.0.3:31514/) printf 200; exit 0;; http://*:31514/) printf 503; exit 0;; esac; done; exit 7',
      );
      const out = execFileSync('sh', ['-c', HEALTH_PROBE], {
        encoding: 'utf8',
        env: { ...process.env, PATH: `${dir}:${process.env.PATH}`, DPLAB_CLUSTER: 'dplab-iptables' },
      });
      expect(
        out
          .split('\n')
          .filter(Boolean)
          .map((l) => l.split(/\s+/)),
      ).toEqual([
        ['dplab-iptables-control-plane', '503'],
        ['dplab-iptables-worker', '200'],
        ['dplab-iptables-worker2', '503'],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
