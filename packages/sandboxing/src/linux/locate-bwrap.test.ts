import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { locateBwrap } from './locate-bwrap.ts';

let base: string;
beforeEach(() => {
  // Under the home folder (owned by this user, not world-writable): a trusted place, unlike /tmp.
  base = realpathSync(mkdtempSync(join(homedir(), '.execd-locate-')));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function fakeBwrap(dir: string, executable = true): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'bwrap');
  writeFileSync(path, '#!/bin/sh\nexit 0\n');
  chmodSync(path, executable ? 0o755 : 0o644);
  return path;
}

test('finds the first executable bwrap on the joined search path', () => {
  fakeBwrap(join(base, 'a'), false);
  const second = fakeBwrap(join(base, 'b'));
  fakeBwrap(join(base, 'c'));
  const searchPath = [join(base, 'empty'), join(base, 'a'), join(base, 'b'), join(base, 'c')].join(':');
  expect(locateBwrap({ searchPath })).toBe(second);
});

test('skips a workspace-local bwrap, also through a symlink, and relative entries', () => {
  const ws = join(base, 'ws');
  fakeBwrap(join(ws, 'bin'));
  symlinkSync(join(ws, 'bin'), join(base, 'alias'));
  const system = fakeBwrap(join(base, 'system'));
  const searchPath = ['bin', join(ws, 'bin'), join(base, 'alias'), join(base, 'system')].join(':');
  expect(locateBwrap({ searchPath, untrustedDirs: [ws] })).toBe(system);
});

test('a root cwd does not hide the system bwrap; none found is undefined', () => {
  const system = fakeBwrap(join(base, 'system'));
  expect(locateBwrap({ searchPath: join(base, 'system'), untrustedDirs: ['/'] })).toBe(system);
  expect(locateBwrap({ searchPath: join(base, 'nothing') })).toBeUndefined();
  expect(locateBwrap({ searchPath: '' })).toBeUndefined();
});

test('skips a bwrap that another user could replace: in a world-writable folder, or group-writable', () => {
  const shared = realpathSync(mkdtempSync(join(tmpdir(), 'execd-locate-shared-')));
  try {
    chmodSync(shared, 0o1777);
    fakeBwrap(join(shared, 'bin'));
    const writableFile = fakeBwrap(join(base, 'loose'));
    chmodSync(writableFile, 0o775);
    const system = fakeBwrap(join(base, 'system'));
    const searchPath = [join(shared, 'bin'), join(base, 'loose'), join(base, 'system')].join(':');
    expect(locateBwrap({ searchPath })).toBe(system);
  } finally {
    rmSync(shared, { recursive: true, force: true });
  }
});
