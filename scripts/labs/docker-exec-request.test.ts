// What a seat's solution may have the runner run for it: docker exec [-i] on its own nodes, and
// nothing else a learner might put after `docker` (docker-relay.test.ts attacks the relay itself).
import { describe, expect, it } from 'vitest';
import { vetDockerExec, wantsStdin } from './docker-exec-request.ts';

const NODES = ['dplab-iptables-control-plane', 'dplab-iptables-worker', 'dplab-iptables-worker2'];

describe('which docker calls a seat may ask for', () => {
  it('takes docker exec [-i] on its own nodes, and names what it refuses', () => {
    expect(vetDockerExec(['exec', NODES[1]!, 'iptables-save', '-t', 'nat'], NODES)).toEqual({
      ok: true,
      request: { node: NODES[1], command: ['iptables-save', '-t', 'nat'], stdin: false },
    });
    expect(vetDockerExec(['exec', '-i', NODES[0]!, 'sh'], NODES)).toMatchObject({ ok: true, request: { stdin: true } });
    const refusals: [string[], RegExp][] = [
      [['run', '--privileged', '-v', '/:/host', 'alpine'], /`docker run` is not available/],
      [['exec', 'dplab-s2-iptables-worker', 'sh'], /dplab-s2-iptables-worker is not one of them/],
      [['exec', '--privileged', NODES[1]!, 'sh'], /--privileged is not allowed/],
      [['exec', '-u', '0', NODES[1]!, 'sh'], /-u is not allowed/],
      [['exec', '-e', 'A=1', NODES[1]!, 'sh'], /-e is not allowed/],
      [['exec', '-it', NODES[1]!, 'sh'], /-it is not allowed/],
      [['exec', NODES[1]!], /names no command/],
      [['exec'], /names no node/],
      [[], /is not available/],
    ];
    for (const [argv, message] of refusals) expect(vetDockerExec(argv, NODES)).toMatchObject({ ok: false, message });
  });
});

it('reads stdin only for -i before the node', () => {
  expect(wantsStdin(['exec', '-i', NODES[0]!, 'sh'])).toBe(true);
  expect(wantsStdin(['exec', NODES[0]!, 'grep', '-i', 'x'])).toBe(false);
  expect(wantsStdin(['run', '-i', 'alpine'])).toBe(false);
});
