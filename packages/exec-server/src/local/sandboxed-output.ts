import { fromUtf8 } from '@execd/protocol';
import type { RetainedChunk } from './retained-output.ts';
import type { SandboxedOutput } from './spawner.ts';

/**
 * The text denial detection reads from a finished process's retained output: stdout (PTY output
 * counts as stdout), stderr, and everything in arrival order. Bytes are concatenated before
 * decoding, so a character split across chunks stays whole.
 */
export function sandboxedOutput(chunks: readonly RetainedChunk[], exitCode: number): SandboxedOutput {
  const stdout: Uint8Array[] = [];
  const stderr: Uint8Array[] = [];
  for (const chunk of chunks) (chunk.stream === 'stderr' ? stderr : stdout).push(chunk.chunk);
  return {
    exitCode,
    stdout: fromUtf8(Buffer.concat(stdout)),
    stderr: fromUtf8(Buffer.concat(stderr)),
    aggregated: fromUtf8(Buffer.concat(chunks.map((chunk) => chunk.chunk))),
  };
}
