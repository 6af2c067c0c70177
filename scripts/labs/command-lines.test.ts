// Long lab commands broken into lines a person can read, and never into another command: bash
// prints a function holding the command the same way (`declare -f`) before and after.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { LAB_MODULES } from '../../labs/index.ts';
import { READABLE_LINE, readableCommand } from './command-lines.ts';

/** How bash itself reads `command`: the body of a function holding it, as `declare -f` prints it. */
const asBashReadsIt = (command: string) => execFileSync('bash', ['-c', `f() {\n${command}\n}\ndeclare -f f`], { encoding: 'utf8' });

describe('readableCommand', () => {
  it('puts each stage of a long pipeline, and each command of a long && chain, on its own line', () => {
    const nat = 'docker exec "$DPLAB_CLUSTER-worker" iptables-save -t nat';
    expect(readableCommand(`${nat} | grep 'lab-proxy-mode-rules/web cluster IP' | grep -o 'KUBE-SVC-[A-Z0-9]*'`)).toBe(
      `${nat} |\n  grep 'lab-proxy-mode-rules/web cluster IP' |\n  grep -o 'KUBE-SVC-[A-Z0-9]*'`,
    );
    expect(
      readableCommand(
        'kubectl -n kube-system rollout restart daemonset kube-proxy && kubectl -n kube-system rollout status daemonset kube-proxy',
      ),
    ).toBe('kubectl -n kube-system rollout restart daemonset kube-proxy &&\n  kubectl -n kube-system rollout status daemonset kube-proxy');
  });

  it('names first, then a loop with one command a line; nothing inside quotes or $( … ) is touched', () => {
    const port = `PORT=$(kubectl -n lab-etp-local get service web -o jsonpath='{.spec.ports[0].nodePort}')`;
    const body = `printf '%-28s %s\\n' "$n" "$(curl -s --max-time 2 "http://$ip:$PORT/" || echo 'no answer; none')"`;
    expect(readableCommand(`${port}; for n in $(kind get nodes | sort); do ip=$(node-ip "$n"); ${body}; done`)).toBe(
      `${port}\nfor n in $(kind get nodes | sort); do\n  ip=$(node-ip "$n")\n  ${body}\ndone`,
    );
  });

  it('breaks a long single command before an option or after a bare --, only where the line would run past', () => {
    expect(
      readableCommand(
        'kubectl -n lab-first-service create deployment web --image=registry.k8s.io/e2e-test-images/agnhost:2.53 --replicas=3 -- /agnhost netexec --http-port=8080',
      ),
    ).toBe(
      'kubectl -n lab-first-service create deployment web \\\n    --image=registry.k8s.io/e2e-test-images/agnhost:2.53 --replicas=3 -- /agnhost netexec \\\n    --http-port=8080',
    );
    expect(
      readableCommand(
        "kubectl -n lab-cilium-l7-policy exec frontend -- curl -s -w ' [%{http_code}]\\n' --max-time 3 -X GET http://api:8080/api/v1/hostname",
      ),
    ).toBe(
      "kubectl -n lab-cilium-l7-policy exec frontend -- curl -s -w ' [%{http_code}]\\n' \\\n    --max-time 3 -X GET http://api:8080/api/v1/hostname",
    );
  });

  it('breaks the pipeline that gives a name its value, inside that $( … ) only', () => {
    expect(
      readableCommand(
        `chain=$(docker exec "$DPLAB_CLUSTER-worker" iptables-save -t nat | awk '/^-A KUBE-SERVICES .*"lab-iptables-chains\\/web cluster IP"/ {print $NF}')`,
      ),
    ).toBe(
      `chain=$(docker exec "$DPLAB_CLUSTER-worker" iptables-save -t nat |\n  awk '/^-A KUBE-SERVICES .*"lab-iptables-chains\\/web cluster IP"/ {print $NF}')`,
    );
  });

  it('keeps a { …; } group whole', () => {
    const c = `cilium hubble enable && { cilium hubble port-forward & sleep 5; } && hubble observe --from-pod ns/client --to-pod ns/web- --last 20`;
    expect(readableCommand(c)).toBe(
      'cilium hubble enable &&\n  { cilium hubble port-forward & sleep 5; } &&\n  hubble observe --from-pod ns/client --to-pod ns/web- --last 20',
    );
  });

  it('leaves alone what fits, what is already on several lines, and a command with a placeholder', () => {
    for (const c of [
      'kubectl get pods',
      'a |\n  b',
      `kubectl -n x create configmap m --from-literal=mode="<mode>" --dry-run=client -o yaml | kubectl apply -f - ${'x'.repeat(60)}`,
    ])
      expect(readableCommand(c)).toBe(c);
  });
});

describe("the labs' commands", () => {
  const commands = LAB_MODULES.flatMap(({ definition: lab }) =>
    lab.steps.flatMap((step) =>
      [...(step.snippets ?? []).map((s) => s.command), ...step.solution.commands, ...Object.values(step.solution.byMode ?? {}).flat()].map(
        (command) => [`${lab.id}/${step.id}`, command] as const,
      ),
    ),
  );
  const broken = commands.filter(([, c]) => readableCommand(c) !== c);

  it('many are long enough to break', () => expect(broken.length).toBeGreaterThan(40));

  it.each(broken)('%s: bash reads the broken command as the same command', (_where, command) => {
    const readable = readableCommand(command);
    expect(readable.split('\n').length).toBeGreaterThan(1);
    expect(asBashReadsIt(readable)).toBe(asBashReadsIt(command));
  });

  it('breaking leaves fewer lines too long to read (what is left is one stage: an awk program, a nested $( … ))', () => {
    const long = (c: string) => c.split('\n').filter((l) => l.length > READABLE_LINE).length;
    const before = commands.reduce((n, [, c]) => n + long(c), 0);
    const after = commands.reduce((n, [, c]) => n + long(readableCommand(c)), 0);
    expect(after).toBeLessThan(before);
  });
});
