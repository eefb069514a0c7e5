import { expect, test } from 'vitest';
import type { FileSystemPlan } from '../file-system-plan.ts';
import { buildSeatbeltArgv, buildSeatbeltPolicy, SANDBOX_EXEC_PATH } from './seatbelt.ts';

const PLAN: FileSystemPlan = {
  fullDiskWrite: false,
  cwd: '/Users/me/ws',
  writableRoots: [
    { root: '/private/tmp', readOnly: [] },
    {
      root: '/Users/me/ws',
      readOnly: [
        { path: '/Users/me/ws/.git', type: 'dir' },
        { path: '/Users/me/ws/.codex', type: 'missing' },
      ],
    },
  ],
};

test('base policy: deny by default, read everywhere, /dev/null writable, no network', () => {
  const { text } = buildSeatbeltPolicy(PLAN, true);
  expect(text.startsWith('(version 1)\n(deny default)\n')).toBe(true);
  expect(text).toContain('(allow process-exec)');
  expect(text).toContain('(allow process-fork)');
  expect(text).toContain('(allow signal (target same-sandbox))');
  expect(text).toContain(
    '(allow file-write-data (require-all (path "/dev/null") (vnode-type CHARACTER-DEVICE)))',
  );
  expect(text).toContain('(allow file-read*)');
  expect(text).not.toContain('network-outbound');
  expect(text).not.toContain('/Users/me'); // paths travel as parameters only
});

test('writable roots with require-not carve-outs, and the anchors cannot be unlinked', () => {
  const { text, params } = buildSeatbeltPolicy(PLAN, true);
  expect(params).toEqual([
    ['WRITABLE_ROOT_0', '/private/tmp'],
    ['WRITABLE_ROOT_1', '/Users/me/ws'],
    ['WRITABLE_ROOT_1_RO_0', '/Users/me/ws/.git'],
    ['WRITABLE_ROOT_1_RO_1', '/Users/me/ws/.codex'],
  ]);
  expect(text).toContain(
    '(allow file-write*\n' +
      '  (subpath (param "WRITABLE_ROOT_0"))\n' +
      '  (require-all (subpath (param "WRITABLE_ROOT_1"))' +
      ' (require-not (subpath (param "WRITABLE_ROOT_1_RO_0")))' +
      ' (require-not (subpath (param "WRITABLE_ROOT_1_RO_1")))))\n',
  );
  expect(text).toContain('(deny file-write-unlink\n  (literal (param "WRITABLE_ROOT_0"))');
  expect(text).toContain('(literal (param "WRITABLE_ROOT_1_RO_1"))');
});

test('network section only when the network is on', () => {
  const { text } = buildSeatbeltPolicy(PLAN, false);
  expect(text).toContain('(allow network-outbound)\n(allow network-inbound)\n(allow system-socket)');
});

test('read-only writes nothing; full access writes everything', () => {
  const readOnly = buildSeatbeltPolicy({ fullDiskWrite: false, cwd: '/', writableRoots: [] }, true);
  expect(readOnly.text).not.toContain('(allow file-write*');
  expect(readOnly.params).toEqual([]);
  const full = buildSeatbeltPolicy({ fullDiskWrite: true, cwd: '/', writableRoots: [] }, false);
  expect(full.text).toContain('(allow file-write*)\n');
});

test('argv: sandbox-exec -p <policy> -D… -- command', () => {
  const policy = buildSeatbeltPolicy(PLAN, true);
  const argv = buildSeatbeltArgv(policy, ['/bin/zsh', '-lc', 'ls']);
  expect(argv.slice(0, 3)).toEqual([SANDBOX_EXEC_PATH, '-p', policy.text]);
  expect(argv.slice(3, 7)).toEqual([
    '-DWRITABLE_ROOT_0=/private/tmp',
    '-DWRITABLE_ROOT_1=/Users/me/ws',
    '-DWRITABLE_ROOT_1_RO_0=/Users/me/ws/.git',
    '-DWRITABLE_ROOT_1_RO_1=/Users/me/ws/.codex',
  ]);
  expect(argv.slice(7)).toEqual(['--', '/bin/zsh', '-lc', 'ls']);
});

test('denied paths are neither readable nor writable, after the allows; restricted read is refused', () => {
  const denied: FileSystemPlan = {
    ...PLAN,
    denied: [
      { path: '/Users/me/.ssh', kind: 'dir' },
      { path: '/Users/me/ws/secret', kind: 'file' },
    ],
  };
  const { text, params } = buildSeatbeltPolicy(denied, true);
  expect(text).toContain(
    '(deny file-read* file-write*\n  (subpath (param "DENIED_0"))\n  (subpath (param "DENIED_1")))\n',
  );
  expect(text.indexOf('(deny file-read*')).toBeGreaterThan(text.indexOf('(allow file-write*'));
  expect(params).toContainEqual(['DENIED_0', '/Users/me/.ssh']);
  expect(params).toContainEqual(['DENIED_1', '/Users/me/ws/secret']);
  expect(() => buildSeatbeltPolicy({ ...PLAN, readableRoots: ['/usr'] }, true)).toThrow(
    expect.objectContaining({ code: 'unsupported' }),
  );
});
