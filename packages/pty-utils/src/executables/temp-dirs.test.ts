import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { tempDirContaining, tempDirs } from './temp-dirs.ts';

const savedTmpdir = process.env.TMPDIR;
afterEach(() => {
  if (savedTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmpdir;
});

test('paths under a temp folder name it, even ones that do not exist yet; system folders do not', () => {
  expect(tempDirContaining(join(tmpdir(), 'not-there', 'ip'))).toBeDefined();
  expect(tempDirContaining('/var/tmp')).toBeDefined();
  expect(tempDirContaining('/usr/bin/sh')).toBeUndefined();
});

test('$TMPDIR counts as a temp folder, but never `/`', () => {
  process.env.TMPDIR = '/run';
  expect(tempDirContaining('/run/execd')).toBe('/run');
  process.env.TMPDIR = '/';
  expect(tempDirs()).not.toContain('/');
  expect(tempDirContaining('/usr/bin/sh')).toBeUndefined();
});
