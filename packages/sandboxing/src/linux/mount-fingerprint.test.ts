import { mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { mountFingerprint, mountPaths } from './mount-fingerprint.ts';

test('mountPaths lists every host path a mount is made from or on, and the working directory', () => {
  const flags = [
    '--clearenv',
    '--setenv',
    'TMPDIR',
    '/tmp/not-a-mount',
    '--new-session',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--bind',
    '/w',
    '/w',
    '--ro-bind-try',
    '/w/a/.git',
    '/w/a/.git',
    '--tmpfs',
    '/w/.codex',
    '--remount-ro',
    '/w/.codex',
    '--perms',
    '0000',
    '--tmpfs',
    '/secret',
    '--dir',
    '/secret/x',
    '--dev-bind',
    '/dev/null',
    '/etc/shadow',
    '--proc',
    '/proc',
    '--chdir',
    '/w',
    '--seccomp',
    '9',
    '--cap-drop',
    'ALL',
    '--',
    '/bin/sh',
    '--bind',
  ];
  expect(mountPaths(flags)).toEqual([
    '/',
    '/',
    '/w',
    '/w',
    '/w/a/.git',
    '/w/a/.git',
    '/w/.codex',
    '/w/.codex',
    '/secret',
    '/dev/null',
    '/etc/shadow',
    '/w',
  ]);
});

test('a folder renamed away and replaced changes the fingerprint; an untouched one does not', async () => {
  const root = mkdtempSync(join(tmpdir(), 'execd-fingerprint-'));
  try {
    const paths = [join(root, 'a'), join(root, 'missing')];
    mkdirSync(paths[0]!);
    const before = await mountFingerprint(paths);
    expect(await mountFingerprint(paths)).toBe(before);
    expect(before.split('\n')[1]).toBe('ENOENT');
    renameSync(paths[0]!, join(root, 'b'));
    mkdirSync(paths[0]!);
    expect(await mountFingerprint(paths)).not.toBe(before);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
