import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExecError } from '@execd/protocol';
import { waitFor } from '@execd/test-kit';
import { beforeAll, expect, test } from 'vitest';
import { isUserNamespaceFailure, probeBwrap } from '../src/index.ts';
import { requireBwrap, sleepMarker, sleepPids, tempDir } from './helpers/index.ts';

let bwrap: string;
beforeAll(() => {
  bwrap = requireBwrap();
});

/** A stand-in bubblewrap: `--help` answers `help`, anything else runs `body`; every call is counted. */
function fakeBwrap(
  dir: string,
  body: string,
  help = 'usage: bwrap --disable-userns',
): { path: string; calls: () => number } {
  const path = join(dir, `bwrap-${Math.random().toString(36).slice(2)}`);
  const counter = `${path}.calls`;
  writeFileSync(counter, '');
  writeFileSync(
    path,
    `#!/bin/sh\necho x >> ${counter}\nif [ "$1" = --help ]; then echo '${help}'; exit 0; fi\n${body}\n`,
  );
  chmodSync(path, 0o755);
  return { path, calls: () => readFileSync(counter, 'utf8').length / 2 };
}

async function rejection(promise: Promise<unknown>): Promise<ExecError> {
  const error = await promise.then(
    () => new Error('expected a rejection'),
    (caught: unknown) => caught,
  );
  if (!ExecError.is(error)) throw error;
  return error;
}

test('the real bubblewrap passes and reports what it supports', async () => {
  const caps = await probeBwrap(bwrap);
  expect(caps).toMatchObject({ path: bwrap, mountProc: true, disableUserns: true });
  expect(await probeBwrap(bwrap)).toBe(caps);
});

test('no user namespaces: a clear unsupported error, cached', async () => {
  using dir = tempDir();
  const fake = fakeBwrap(
    dir.path,
    `echo 'bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.' >&2; exit 1`,
  );
  const error = await rejection(probeBwrap(fake.path));
  expect(error.code).toBe('unsupported');
  expect(error.message).toMatch(/user namespaces/);
  expect(fake.calls()).toBe(2); // --help, then one sandbox
  expect(await rejection(probeBwrap(fake.path))).toBe(error);
  expect(fake.calls()).toBe(2);
});

test("another failure is unsupported with bubblewrap's own message", async () => {
  using dir = tempDir();
  const fake = fakeBwrap(dir.path, `echo 'bwrap: seccomp filter rejected' >&2; exit 1`);
  const error = await rejection(probeBwrap(fake.path));
  expect(error.code).toBe('unsupported');
  expect(error.message).toContain('bwrap: seccomp filter rejected');
});

test('a procfs that cannot be mounted falls back to no --proc, and old flags are detected', async () => {
  using dir = tempDir();
  const fake = fakeBwrap(
    dir.path,
    `for a in "$@"; do if [ "$a" = --proc ]; then echo "bwrap: Can't mount proc on /newroot/proc: Operation not permitted" >&2; exit 1; fi; done; exit 0`,
    'usage: bwrap [OPTIONS...]',
  );
  expect(await probeBwrap(fake.path)).toMatchObject({ mountProc: false, disableUserns: false, argv0: false });
});

test('the probe does not wait for descendants holding stderr open', async () => {
  using dir = tempDir();
  const marker = sleepMarker();
  const fake = fakeBwrap(dir.path, `sleep ${marker} >&2 & exit 0`);
  try {
    expect(await probeBwrap(fake.path)).toMatchObject({ path: fake.path });
  } finally {
    await waitFor(() => sleepPids(marker).length > 0, { what: 'the stray sleep' });
    for (const pid of sleepPids(marker)) process.kill(pid, 'SIGKILL');
    await waitFor(() => sleepPids(marker).length === 0, { what: 'the stray sleep to die' });
  }
});

test('a bubblewrap that never answers times out as unsupported', async () => {
  using dir = tempDir();
  const fake = fakeBwrap(dir.path, 'exec sleep 1000');
  const error = await rejection(probeBwrap(fake.path, { timeoutMs: 300 }));
  expect(error.code).toBe('unsupported');
  expect(error.message).toMatch(/no answer within 300 ms/);
});

test("user-namespace failures are recognised in bubblewrap's messages", () => {
  expect(isUserNamespaceFailure('bwrap: setting up uid map: Permission denied')).toBe(true);
  expect(isUserNamespaceFailure('bwrap: Creating new namespace failed: Operation not permitted')).toBe(true);
  expect(isUserNamespaceFailure('bwrap: execvp foo: No such file or directory')).toBe(false);
});
