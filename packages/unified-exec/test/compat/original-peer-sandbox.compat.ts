// The execd client against the original Codex 0.169.0 exec-server: the original knows only its
// own sandbox form, so a sandboxed command must reach it in that form (`originalSandboxFor`), and
// be confined there: attack from inside, check from outside.
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type PeerServer, startPeerServer } from '@execd/test-kit';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Environment } from '../../src/index.ts';
import { createHarness, setRemoteEnvironmentFactory } from '../helpers/harness.ts';

// Outside every workspace-write root (/tmp and $TMPDIR are writable there).
const OUTSIDE_PARENT = '/var/tmp';

describe.skipIf(process.platform !== 'linux')('a remote environment on an original exec-server', () => {
  let peer: PeerServer;
  let outside: string;
  beforeAll(async () => {
    peer = await startPeerServer();
    outside = await mkdtemp(join(OUTSIDE_PARENT, 'uexec-orig-'));
    // The original reads only JSON frames.
    setRemoteEnvironmentFactory((options) =>
      Environment.connect({ ...options, url: peer.url, client: { codec: 'json' } }),
    );
  }, 60_000);
  afterAll(async () => {
    await peer?.close();
    await rm(outside, { recursive: true, force: true });
  });

  test('workspace-write is sent in the original form: the workspace is writable, outside it is not', async () => {
    await using h = await createHarness('remote', { environment: { permissionProfile: 'workspace-write' } });
    const info = await h.environment.info();
    expect(info.capabilities.processResize).toBeUndefined(); // an original peer
    const inside = await h.execParsed({ cmd: "echo 'hello' > inside.txt && cat inside.txt" });
    expect(inside).toMatchObject({ exitCode: 0, output: 'hello\n' });
    expect(readFileSync(join(h.dir, 'inside.txt'), 'utf8')).toBe('hello\n');

    const target = join(outside, 'escaped.txt');
    const denied = await h.execParsed({ cmd: `touch ${target}` });
    expect(denied.exitCode).not.toBe(0);
    expect(existsSync(target)).toBe(false);
  });

  test('apply_patch writes through the fs/* methods in the original sandbox form, and is confined there', async () => {
    await using h = await createHarness('remote', {
      manager: { approvalPolicy: 'never' },
      environment: { permissionProfile: 'workspace-write' },
    });
    const patch = (path: string) =>
      `apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: ${path}\n+patched\n*** End Patch\nEOF\n`;
    const added = await h.exec({ cmd: patch('added.txt') });
    expect(added.text).toContain('Success. Updated the following files:\nA added.txt');
    expect(readFileSync(join(h.dir, 'added.txt'), 'utf8')).toBe('patched\n');
    // Inside the workspace but protected by the original's sandbox (`.codex` stays read-only).
    const protectedWrite = await h.exec({ cmd: patch('.codex/config.toml') });
    expect(protectedWrite.text).not.toContain('Success.');
    expect(existsSync(join(h.dir, '.codex', 'config.toml'))).toBe(false);
  });

  test('read-only: the workspace is not writable either', async () => {
    await using h = await createHarness('remote', { environment: { permissionProfile: 'read-only' } });
    const result = await h.execParsed({ cmd: 'touch made.txt' });
    expect(result.exitCode).not.toBe(0);
    expect(existsSync(join(h.dir, 'made.txt'))).toBe(false);
  });
});
