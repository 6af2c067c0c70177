import { describe, expect, it } from 'vitest';
import { RUN_QUEUE_MAX, RunQueue, type RunState } from './run-queue.ts';

/** A stand-in for the terminal: what reached the shell, in order, and a prompt it can mark. */
function fakeTerminal() {
  const received: string[] = [];
  const counts: number[] = [];
  const queue = new RunQueue(
    (data) => received.push(data),
    (n) => counts.push(n),
  );
  return { queue, received, counts };
}

describe('RunQueue', () => {
  it('sends three quick Runs one after another, each when the prompt comes back', () => {
    const { queue, received, counts } = fakeTerminal();
    queue.prompt(); // the shell's first prompt
    const states: RunState[][] = [[], [], []];
    ['kubectl get pods', 'kubectl get svc web', 'kubectl get endpointslices'].forEach((text, i) =>
      queue.submit({ text, execute: true, onState: (s) => states[i].push(s) }),
    );
    expect(received).toEqual(['kubectl get pods\r']);
    expect(states).toEqual([['sent'], ['queued'], ['queued']]);
    expect(queue.waiting).toBe(2);

    // Output of the first command arrives; nothing else goes until its prompt.
    expect(received).toHaveLength(1);
    queue.prompt();
    expect(received).toEqual(['kubectl get pods\r', 'kubectl get svc web\r']);
    queue.prompt();
    expect(received).toEqual(['kubectl get pods\r', 'kubectl get svc web\r', 'kubectl get endpointslices\r']);
    expect(states).toEqual([['sent'], ['queued', 'sent'], ['queued', 'sent']]);
    expect(counts).toEqual([1, 2, 1, 0]);
    queue.prompt();
    expect(received).toHaveLength(3);
  });

  it('sends at once when the shell is at its prompt', () => {
    const { queue, received } = fakeTerminal();
    queue.prompt();
    expect(queue.submit({ text: 'ls', execute: true })).toBe('sent');
    queue.prompt();
    expect(queue.submit({ text: 'pwd', execute: true })).toBe('sent');
    expect(received).toEqual(['ls\r', 'pwd\r']);
  });

  it('never waits on a shell that marks no prompt (older runner, node shell, a prompt of the learner’s own)', () => {
    const { queue, received } = fakeTerminal();
    for (const text of ['a', 'b', 'c']) expect(queue.submit({ text, execute: true })).toBe('sent');
    expect(received).toEqual(['a\r', 'b\r', 'c\r']);
  });

  it('waits after a command the learner typed and entered themselves', () => {
    const { queue, received } = fakeTerminal();
    queue.prompt();
    queue.entered();
    expect(queue.submit({ text: 'kubectl get pods', execute: true })).toBe('queued');
    expect(received).toEqual([]);
    queue.prompt();
    expect(received).toEqual(['kubectl get pods\r']);
  });

  it('holds what follows a typed (not run) command until the learner runs it', () => {
    const { queue, received } = fakeTerminal();
    queue.prompt();
    queue.submit({ text: 'kubectl get pods -n <namespace>', execute: false });
    queue.submit({ text: 'kubectl get svc', execute: true });
    expect(received).toEqual(['kubectl get pods -n <namespace>']);
    queue.prompt(); // the learner finished the line and pressed Enter; it ran
    expect(received).toEqual(['kubectl get pods -n <namespace>', 'kubectl get svc\r']);
  });

  it('is bounded: past RUN_QUEUE_MAX waiting, a Run is refused and says so', () => {
    const { queue, received } = fakeTerminal();
    queue.prompt();
    queue.submit({ text: 'sleep 60', execute: true });
    for (let i = 0; i < RUN_QUEUE_MAX; i++) expect(queue.submit({ text: `echo ${i}`, execute: true })).toBe('queued');
    const states: RunState[] = [];
    expect(queue.submit({ text: 'echo late', execute: true, onState: (s) => states.push(s) })).toBe('full');
    expect(states).toEqual(['full']);
    expect(queue.waiting).toBe(RUN_QUEUE_MAX);
    expect(received).toEqual(['sleep 60\r']);
  });

  it('drops what waits when cleared or when the shell is replaced', () => {
    const { queue, received } = fakeTerminal();
    queue.prompt();
    queue.submit({ text: 'sleep 60', execute: true });
    const states: RunState[] = [];
    queue.submit({ text: 'echo 1', execute: true, onState: (s) => states.push(s) });
    expect(queue.clear()).toBe(1);
    expect(states).toEqual(['queued', 'dropped']);
    queue.prompt();
    expect(received).toEqual(['sleep 60\r']);

    queue.submit({ text: 'sleep 60', execute: true });
    queue.submit({ text: 'echo 2', execute: true });
    queue.reset();
    // The new shell has not marked a prompt yet: a Run goes at once, as before.
    expect(queue.submit({ text: 'echo 3', execute: true })).toBe('sent');
    expect(received).toEqual(['sleep 60\r', 'sleep 60\r', 'echo 3\r']);
  });
  it("a line the learner typed while a command ran goes first; the waiting Run after that line's prompt", () => {
    const { queue, received } = fakeTerminal();
    queue.prompt();
    queue.submit({ text: 'kubectl apply -f web.yaml', execute: true });
    queue.submit({ text: 'kubectl get pods', execute: true });
    // While apply runs, the learner types a whole line of their own (it waits in the terminal's input).
    queue.typed('kubectl rollout status deploy/web\r');
    queue.prompt(); // apply is done: the shell runs the learner's line, not the Run
    expect(received).toEqual(['kubectl apply -f web.yaml\r']);
    queue.prompt(); // the learner's line is done
    expect(received).toEqual(['kubectl apply -f web.yaml\r', 'kubectl get pods\r']);
  });

  it('a half-typed line at the prompt holds waiting Runs until the learner presses Enter', () => {
    const { queue, received } = fakeTerminal();
    queue.prompt();
    queue.submit({ text: 'sleep 5', execute: true });
    queue.submit({ text: 'kubectl get pods', execute: true });
    queue.typed('kubectl -n lab r'); // typed ahead, no Enter
    queue.prompt();
    expect(received).toEqual(['sleep 5\r']);
    queue.typed('ollout status deploy/web\r');
    queue.prompt();
    expect(received).toEqual(['sleep 5\r', 'kubectl get pods\r']);
  });

  it('Enter on a Typed command runs it, and is not taken for a line typed ahead', () => {
    const { queue, received } = fakeTerminal();
    queue.prompt();
    queue.submit({ text: 'echo <answer>', execute: false });
    queue.submit({ text: 'kubectl get pods', execute: true });
    queue.typed('\x7f\x7f42\r'); // the learner fixes the placeholder and presses Enter
    queue.prompt();
    expect(received).toEqual(['echo <answer>', 'kubectl get pods\r']);
  });
});
