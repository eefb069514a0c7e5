// The owner walk over a stand-in /proc: links are symlinks whose targets read as the kernel's
// (`socket:[N]`, `user:[N]`), so one walk's answers for many sockets can be checked exactly.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { findSocketOwner } from './socket-owner.ts';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A /proc with `self` and the given processes: namespaces and the sockets each holds. */
function fakeProc(processes: Record<string, { ns: 'ours' | 'sandbox'; sockets: number[] }>): string {
  const root = mkdtempSync(join(tmpdir(), 'execd-fake-proc-'));
  roots.push(root);
  const add = (pid: string, ns: 'ours' | 'sandbox', sockets: number[]): void => {
    mkdirSync(join(root, pid, 'fd'), { recursive: true });
    mkdirSync(join(root, pid, 'ns'));
    symlinkSync(ns === 'ours' ? 'user:[4026531837]' : 'user:[4026532999]', join(root, pid, 'ns', 'user'));
    symlinkSync(ns === 'ours' ? 'pid:[4026531836]' : 'pid:[4026532998]', join(root, pid, 'ns', 'pid'));
    sockets.forEach((inode, fd) => {
      symlinkSync(`socket:[${inode}]`, join(root, pid, 'fd', String(fd + 3)));
    });
    symlinkSync('/dev/null', join(root, pid, 'fd', '0'));
  };
  add('self', 'ours', [1]);
  for (const [pid, { ns, sockets }] of Object.entries(processes)) add(pid, ns, sockets);
  return root;
}

describe('findSocketOwner', () => {
  test('lookups made together are each answered as a walk of their own would', async () => {
    const root = fakeProc({
      '100': { ns: 'ours', sockets: [10, 11, 12, 20] },
      '150': { ns: 'ours', sockets: [11] },
      '200': { ns: 'sandbox', sockets: [20, 21] },
      '300': { ns: 'sandbox', sockets: [] },
    });
    const signal = AbortSignal.timeout(10_000);
    const inodes = [1, 10, 11, 12, 20, 21, 99];
    const owners = await Promise.all(inodes.map((inode) => findSocketOwner(inode, signal, root)));
    expect(Object.fromEntries(inodes.map((inode, i) => [inode, owners[i]]))).toEqual({
      1: { kind: 'host', pid: process.pid }, // held by this process
      10: { kind: 'host', pid: 100 },
      11: { kind: 'host', pid: 150 }, // the newest of its host holders
      12: { kind: 'host', pid: 100 },
      20: { kind: 'sandboxed', pid: 200 }, // held inside a sandbox too: sandboxed
      21: { kind: 'sandboxed', pid: 200 },
      99: { kind: 'unknown' },
    });
  });

  test('a lookup whose caller gives up rejects; the others of its walk are answered', async () => {
    const root = fakeProc({ '100': { ns: 'ours', sockets: [10] } });
    const quitter = new AbortController();
    const gone = findSocketOwner(10, quitter.signal, root);
    const kept = findSocketOwner(10, AbortSignal.timeout(10_000), root);
    quitter.abort(new Error('timed out'));
    await expect(gone).rejects.toThrow('timed out');
    expect(await kept).toEqual({ kind: 'host', pid: 100 });
  });

  test('a /proc that is gone leaves the lookup unattributed', async () => {
    const root = fakeProc({});
    rmSync(root, { recursive: true });
    await expect(findSocketOwner(10, AbortSignal.timeout(10_000), root)).resolves.toEqual({
      kind: 'unknown',
    });
  });
});
