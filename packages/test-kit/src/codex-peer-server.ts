// Starts the original Codex exec-server (`codex exec-server --listen ws://127.0.0.1:0`) as a
// child in its own process group, reads its URL from stdout, and stops the whole group on close.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installCodexPeer } from './codex-peer-install.ts';
import { waitFor } from './wait-for.ts';

/** Path of the original `codex` executable (installs it on first use; `CODEX_PEER_BIN` overrides). */
export function peerBinary(): string {
  return process.env.CODEX_PEER_BIN ?? installCodexPeer();
}

/** A running original exec-server. */
export interface PeerServer extends AsyncDisposable {
  readonly url: string;
  readonly child: ChildProcess;
  close(): Promise<void>;
}

/** Options of {@link startPeerServer}. */
export interface PeerServerOptions {
  /** Variables set on top of this process's environment and the scratch `CODEX_HOME`/`TMPDIR`. */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Starts the original exec-server on 127.0.0.1:0 with a scratch CODEX_HOME and a private TMPDIR.
 * The TMPDIR matters: the original installs its `codex-linux-sandbox` helper alias under its temp
 * dir and refuses to when CODEX_HOME sits under the shared one, so with the host's `/tmp` every
 * sandboxed command fails with `bwrap: execvp codex-linux-sandbox`.
 */
export async function startPeerServer(options: PeerServerOptions = {}): Promise<PeerServer> {
  const scratch = mkdtempSync(join(tmpdir(), 'execd-codex-peer-'));
  const home = join(scratch, 'codex-home');
  const privateTmp = join(scratch, 'tmp');
  mkdirSync(home);
  mkdirSync(privateTmp);
  const child = spawn(peerBinary(), ['exec-server', '--listen', 'ws://127.0.0.1:0'], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, CODEX_HOME: home, TMPDIR: privateTmp, RUST_LOG: 'error', ...options.env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (bytes: Buffer) => {
    stdout += bytes.toString();
  });
  child.stderr!.on('data', (bytes: Buffer) => {
    stderr += bytes.toString();
  });
  const exited = once(child, 'exit');
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid!, 'SIGTERM');
        } catch {}
        const timer = setTimeout(() => {
          try {
            process.kill(-child.pid!, 'SIGKILL');
          } catch {}
        }, 5_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(scratch, { recursive: true, force: true });
    })();
    return closing;
  };
  try {
    const url = await waitFor(
      () => {
        if (child.exitCode !== null) throw new Error(`codex exec-server exited: ${stderr}`);
        return stdout.match(/ws:\/\/127\.0\.0\.1:\d+/)?.[0];
      },
      { timeoutMs: 30_000, what: 'the original exec-server URL' },
    );
    return { url, child, close, [Symbol.asyncDispose]: close };
  } catch (error) {
    await close();
    throw error;
  }
}
