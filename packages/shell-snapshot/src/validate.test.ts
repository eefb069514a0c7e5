import { RpcError } from '@execd/protocol';
import { describe, expect, test } from 'vitest';
import { checkSnapshotRequest } from './validate.ts';

const bash = { name: 'bash', path: '/bin/bash' };

describe('checkSnapshotRequest', () => {
  test('applies to [shell.path, -lc, script] and locates the shell inside a wrapper', () => {
    expect(checkSnapshotRequest({ scopeId: 's', shell: bash }, ['/bin/bash', '-lc', 'true'])).toEqual({
      status: 'apply',
      shell: 'bash',
      shellStart: 0,
    });
    const wrapped = ['bwrap', '--ro-bind', '/', '/', '--', '/bin/bash', '-lc', 'true', 'arg0'];
    expect(
      checkSnapshotRequest({ scopeId: 's', shell: bash }, ['/bin/bash', '-lc', 'true', 'arg0'], wrapped),
    ).toMatchObject({ status: 'apply', shellStart: 5 });
  });

  test.each([
    [['/bin/bash', '-c', 'true']],
    [['/usr/bin/bash', '-lc', 'true']],
    [['/bin/bash', '-lc']],
    [['true']],
  ])('silently skips %j', (argv) => {
    expect(checkSnapshotRequest({ scopeId: 's', shell: bash }, argv)).toEqual({ status: 'skip' });
  });

  test('skips when the prepared command does not end with the argv', () => {
    const argv = ['/bin/bash', '-lc', 'true'];
    expect(checkSnapshotRequest({ scopeId: 's', shell: bash }, argv, ['/bin/bash', '-lc', 'other'])).toEqual({
      status: 'skip',
    });
  });

  test.each(['', 'x'.repeat(257), 'é'.repeat(129)])(
    'rejects a scope of %# with the original text',
    (scopeId) => {
      // The scope is checked before the argv shape, even for a command that would be skipped.
      const check = checkSnapshotRequest({ scopeId, shell: bash }, ['true']);
      expect(check.status).toBe('invalid');
      if (check.status !== 'invalid') return;
      expect(check.error).toBeInstanceOf(RpcError);
      expect(check.error.code).toBe('invalidParams');
      expect(check.error.rpcCode).toBe(-32602);
      expect(check.error.message).toBe('shell snapshot scope must be non-empty and at most 256 bytes');
    },
  );

  test('accepts a scope of exactly 256 bytes', () => {
    const check = checkSnapshotRequest({ scopeId: 'é'.repeat(128), shell: bash }, [
      '/bin/bash',
      '-lc',
      'true',
    ]);
    expect(check.status).toBe('apply');
  });

  test('rejects an unsupported shell with the original text, only when the argv qualifies', () => {
    const fish = { name: 'fish', path: '/usr/bin/fish' };
    const check = checkSnapshotRequest({ scopeId: 's', shell: fish }, ['/usr/bin/fish', '-lc', 'true']);
    expect(check.status).toBe('invalid');
    if (check.status !== 'invalid') return;
    expect(check.error.code).toBe('invalidParams');
    expect(check.error.message).toBe('shell snapshots are unsupported for shell `fish`');
    expect(checkSnapshotRequest({ scopeId: 's', shell: fish }, ['/usr/bin/fish', '-c', 'true']).status).toBe(
      'skip',
    );
  });
});
