import { describe, expect, it } from 'vitest';
import { shellUser } from './shell-user.ts';

describe('DPLAB_SHELL_USER', () => {
  it('is <uid>:<gid> of a user other than root, or unset', () => {
    expect(shellUser({})).toBeNull();
    expect(shellUser({ DPLAB_SHELL_USER: '' })).toBeNull();
    expect(shellUser({ DPLAB_SHELL_USER: '2000000003:2000000003' })).toEqual({ uid: 2000000003, gid: 2000000003 });
    for (const bad of ['0:0', '1000:0', 'root', '12:', '-5:5', '1:2:3', '99999999999:1'])
      expect(() => shellUser({ DPLAB_SHELL_USER: bad }), bad).toThrow(/must be <uid>:<gid> of a user other than root/);
  });
});
