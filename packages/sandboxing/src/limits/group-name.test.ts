import { describe, expect, test } from 'vitest';
import { commandGroupName, groupOwner, parseCommandGroupName } from './group-name.ts';

describe('command group names', () => {
  test('round-trip the owner and id', async () => {
    const owner = await groupOwner();
    expect(owner.pid).toBe(process.pid);
    const name = commandGroupName(owner, 'proc-7_a');
    expect(parseCommandGroupName(name)).toEqual({ owner, id: 'proc-7_a' });
  });

  test.each(['', '.', '..', 'a/b', 'a.b', 'x'.repeat(65), 'sp ace'])('refuse the id %j', (id) => {
    const owner = { pidNamespace: '1', pid: 2, startTime: '3' };
    expect(() => commandGroupName(owner, id)).toThrow(expect.objectContaining({ code: 'invalidParams' }));
  });

  test('ignore names execd did not make', () => {
    for (const name of ['execd', '1.2.3', 'a.2.3.x', '1.2.3.x/y', 'execd-executor']) {
      expect(parseCommandGroupName(name)).toBeUndefined();
    }
  });
});
