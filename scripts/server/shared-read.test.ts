// One cluster status read for the terminals that open at about the same time (shared-read.ts).
import { describe, expect, it } from 'vitest';
import { sharedRead } from './shared-read.ts';

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('sharedRead', () => {
  it('callers during a read, and within freshMs of its answer, share it; later ones read again', async () => {
    let t = 0;
    const reads: { key: string; signal: AbortSignal; done: ReturnType<typeof deferred<string>> }[] = [];
    const read = sharedRead(
      (key: string, signal: AbortSignal) => {
        const done = deferred<string>();
        reads.push({ key, signal, done });
        return done.promise;
      },
      1_000,
      () => t,
    );
    const a = read('iptables');
    const b = read('iptables');
    const c = read('ipvs');
    expect(reads.map((r) => r.key)).toEqual(['iptables', 'ipvs']);
    reads[0]!.done.resolve('one');
    reads[1]!.done.resolve('two');
    expect(await Promise.all([a, b, c])).toEqual(['one', 'one', 'two']);
    t = 900;
    expect(await read('iptables')).toBe('one');
    t = 2_000;
    const d = read('iptables');
    expect(reads).toHaveLength(3);
    reads[2]!.done.resolve('three');
    expect(await d).toBe('three');
  });

  it('a caller that stops waiting leaves the read to the others; the last one cancels it and settles only once it has', async () => {
    let settled = false;
    const read = sharedRead(
      (_key: string, signal: AbortSignal) =>
        new Promise<string>((_resolve, reject) =>
          signal.addEventListener('abort', () =>
            setTimeout(() => {
              settled = true;
              reject(new Error('cancelled'));
            }, 20),
          ),
        ),
      1_000,
    );
    const first = new AbortController();
    const second = new AbortController();
    const a = read('iptables', first.signal);
    const b = read('iptables', second.signal);
    first.abort(new Error('socket closed'));
    await expect(a).rejects.toThrow('socket closed');
    expect(settled).toBe(false);
    second.abort(new Error('socket closed'));
    await expect(b).rejects.toThrow('socket closed');
    expect(settled).toBe(true);
  });
});
