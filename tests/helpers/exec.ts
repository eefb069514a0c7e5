// Building `process/start` params and collecting a process's events through the public client.

import type { ExecParams, SandboxContext } from '@execd/protocol';
import { pathToFileUri } from '@execd/protocol';
import type { ExecProcess } from '@execd/protocol/contract';

/** The parts of `ExecParams` a suite sets; the rest get the protocol's defaults. */
export interface StartSpec {
  readonly processId: string;
  readonly argv: readonly string[];
  /** Native absolute path (default `/tmp`). */
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly tty?: boolean;
  readonly pipeStdin?: boolean;
  readonly sandbox?: SandboxContext;
}

/** A minimal environment for children: PATH and a marker the leak checks can find. */
export function childEnv(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', ...extra };
}

/** `workspace-write`, the network off, neither `/tmp` nor `$TMPDIR` writable: the confined sandbox. */
export const CONFINED_SANDBOX: SandboxContext = {
  profile: 'workspace-write',
  network: 'off',
  excludeSlashTmp: true,
  excludeTmpdirEnvVar: true,
};

/** Full `ExecParams` from a {@link StartSpec}. */
export function execParams(spec: StartSpec): ExecParams {
  return {
    processId: spec.processId,
    argv: [...spec.argv],
    cwd: pathToFileUri(spec.cwd ?? '/tmp'),
    env: { ...(spec.env ?? childEnv()) },
    tty: spec.tty ?? false,
    pipeStdin: spec.pipeStdin ?? false,
    enforceManagedNetwork: false,
    ...(spec.sandbox === undefined ? {} : { sandbox: spec.sandbox }),
  } as ExecParams;
}

/** Everything a process produced, as seen through `events()`. */
export interface Collected {
  readonly stdout: Buffer;
  readonly stderr: Buffer;
  readonly pty: Buffer;
  readonly exitCode: number | undefined;
  readonly sandboxDenied: boolean;
  readonly closed: boolean;
  /** Set when the client lost the process (a `failed` event). */
  readonly failure: string | undefined;
  /** Seqs seen, in order (to check for holes and duplicates). */
  readonly seqs: readonly number[];
}

/** Follows `process.events()` to the end (`closed` or `failed`) and gathers everything. */
export async function collect(
  process: Pick<ExecProcess, 'events'>,
  options: { readonly cancelSignal?: AbortSignal; readonly onOutput?: (bytes: number) => void } = {},
): Promise<Collected> {
  const parts: Record<'stdout' | 'stderr' | 'pty', Buffer[]> = { stdout: [], stderr: [], pty: [] };
  const seqs: number[] = [];
  let exitCode: number | undefined;
  let sandboxDenied = false;
  let closed = false;
  let failure: string | undefined;
  for await (const event of process.events(
    options.cancelSignal === undefined ? {} : { cancelSignal: options.cancelSignal },
  )) {
    if (event.type === 'failed') {
      failure = event.message;
      break;
    }
    seqs.push(event.seq);
    if (event.type === 'output') {
      parts[event.stream].push(Buffer.from(event.chunk));
      options.onOutput?.(event.chunk.byteLength);
    } else if (event.type === 'exited') {
      exitCode = event.exitCode;
      sandboxDenied = event.sandboxDenied === true;
    } else {
      closed = true;
    }
  }
  return {
    stdout: Buffer.concat(parts.stdout),
    stderr: Buffer.concat(parts.stderr),
    pty: Buffer.concat(parts.pty),
    exitCode,
    sandboxDenied,
    closed,
    failure,
    seqs,
  };
}

/** True when `seqs` is 1, 2, 3, ... without holes or repeats. */
export function isContiguousFromOne(seqs: readonly number[]): boolean {
  return seqs.every((seq, index) => seq === index + 1);
}
