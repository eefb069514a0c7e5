import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { CODEX_PEER_VERSION, codexPeerDir, installCodexPeer } from './codex-peer-install.ts';

const scratch: string[] = [];
afterEach(() => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the pinned original Codex', () => {
  test('lives in a cache outside the repository, per version', () => {
    expect(CODEX_PEER_VERSION).toBe('0.169.0');
    expect(codexPeerDir({ HOME: '/home/u', XDG_CACHE_HOME: '/cache' })).toBe(
      '/cache/execd-peers/codex-0.169.0',
    );
    expect(codexPeerDir({ CODEX_PEER_DIR: '/elsewhere' })).toBe('/elsewhere');
  });

  test('an existing install is reused without npm', () => {
    const dir = mkdtempSync(join(tmpdir(), 'codex-peer-'));
    scratch.push(dir);
    const bin = join(dir, 'node_modules', '.bin', 'codex');
    mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
    writeFileSync(bin, '#!/bin/sh\n');
    chmodSync(bin, 0o755);
    // No npm on PATH: an install attempt would fail.
    expect(installCodexPeer({ CODEX_PEER_DIR: dir, PATH: dir })).toBe(bin);
  });
});
