/**
 * Telling loopback clients apart by the Unix user that owns their end of the connection: only a
 * connection in use counts (a TIME_WAIT line of the same port, which Linux reuses on loopback,
 * prints uid 0, the portal's own root), a line missed in one read is looked for again, and a
 * client whose owner is unknown is never taken for the portal's own user.
 */
import { describe, expect, it } from 'vitest';
import { isOperator, socketOwner } from './client-source.ts';

const HEAD = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';
/** One /proc/net/tcp line: 127.0.0.1:<port> to the portal on 127.0.0.1:37103, in state `st`, owned by `uid`. */
const line = (sl: number, port: number, st: string, uid: number) =>
  `  ${sl}: 0100007F:${port.toString(16).toUpperCase().padStart(4, '0')} 0100007F:90EF ${st} 00000000:00000000 00:00000000 00000000  ${uid}        0 0 1 0000000000000000`;

describe('socketOwner', () => {
  it('takes the connection in use, not a closed one of the same port waiting out TIME_WAIT (uid 0)', () => {
    const table = [HEAD, line(0, 51234, '06', 0), line(1, 51234, '01', 1042)].join('\n');
    expect(socketOwner('127.0.0.1', 51234, () => table)).toBe(1042);
    // Before, the first line of the port won: uid 0, which is the portal's own root.
    expect(socketOwner('127.0.0.1', 51234, () => [HEAD, line(0, 51234, '06', 0)].join('\n'))).toBeUndefined();
  });

  it('reads the table again when a busy host left the line out of one read', () => {
    const reads = [[HEAD, line(0, 40000, '01', 7)].join('\n'), [HEAD, line(0, 40000, '01', 7), line(1, 51234, '01', 1042)].join('\n')];
    let n = 0;
    expect(socketOwner('::ffff:127.0.0.1', 51234, () => reads[Math.min(n++, 1)])).toBe(1042);
    expect(n).toBe(2);
  });

  it('gives up after a few reads, and when the table cannot be read', () => {
    let n = 0;
    expect(socketOwner('127.0.0.1', 51234, () => (n++, HEAD))).toBeUndefined();
    expect(n).toBe(3);
    expect(
      socketOwner('127.0.0.1', 51234, () => {
        throw new Error('ENOENT');
      }),
    ).toBeUndefined();
  });
});

describe('isOperator', () => {
  it('is the portal’s own user only when the kernel named the client’s user', () => {
    expect(isOperator({ key: 'uid:0', uid: 0 }, 0)).toBe(true);
    expect(isOperator({ key: 'uid:1042', uid: 1042 }, 0)).toBe(false);
    // A loopback client whose owner was not found is counted like any other client.
    expect(isOperator({ key: 'net:127.0.0.1' }, 0)).toBe(false);
  });
});
