import type { SandboxParam, SandboxType } from '@execd/protocol';
import type { ForkServer, SpawnedProcess } from '@execd/pty-utils';
import type {
  CommandLimits,
  CommandOutput,
  PreparedSandboxes,
  SandboxRootPins,
  SpawnedLimits,
  SpawnedNetwork,
  SpawnManagedNetwork,
} from '@execd/sandboxing';

/** What the process table asks a Spawner to launch (validated, env computed, cwd a native path). */
export interface LocalSpawnRequest {
  /** The table key, for logs and sandbox helpers. */
  readonly processId: string;
  /** Program and arguments; never empty. */
  readonly argv: readonly string[];
  /** Absolute native working directory. */
  readonly cwd: string;
  /** The child's entire environment. */
  readonly env: Readonly<Record<string, string>>;
  /** What the child sees as `argv[0]`. */
  readonly arg0: string | undefined;
  /** PTY (stdin always writable) or pipes. */
  readonly tty: boolean;
  /** Pipes only: `pipe` keeps stdin writable, `null` gives the child /dev/null (EOF). */
  readonly stdin: 'pipe' | 'null';
  /**
   * Sandbox intent from the request (with `enforceManagedNetwork` applied: see
   * `withManagedNetwork`); undefined = run unsandboxed.
   */
  readonly sandbox: SandboxParam | undefined;
  /**
   * Set for a `proxied` process: the proxy its traffic must go through. The spawner starts the
   * bridge to it and returns it as `network`; a spawner that cannot must reject, never run the
   * command with another network.
   */
  readonly managedNetwork?: SpawnManagedNetwork | undefined;
  /** Cap on draining output after the child exits. */
  readonly drainTimeoutMs: number;
  /** The session's pinned writable roots (a root whose resolution changed is refused). */
  readonly rootPins?: SandboxRootPins | undefined;
  /** Executor secrets masked in every sandbox (the server's auth token file). */
  readonly hiddenPaths?: readonly string[] | undefined;
  /** Resource limits of a sandboxed child (default: sandboxing's defaults; `false`: none). */
  readonly limits?: CommandLimits | false | undefined;
  /** Sandboxes started ahead of their commands (see sandboxing's `PreparedSandboxes`). */
  readonly preparedSandboxes?: PreparedSandboxes | undefined;
  /** Starts commands on pipes instead of a fork of this process (pty-utils' `ForkServer`). */
  readonly forkServer?: ForkServer | undefined;
}

/** A launched child and the sandbox it actually runs under. */
export interface LocalSpawnResult {
  readonly process: SpawnedProcess;
  /** `none` when unsandboxed. */
  readonly sandboxType: SandboxType;
  /** The bridge of a `proxied` process (the table closes it, with the proxy, when the process closes). */
  readonly network?: SpawnedNetwork | undefined;
  /** The resource limits of a sandboxed child, and what it hit. */
  readonly limits?: SpawnedLimits | undefined;
}

/**
 * Launches one child. Rejects with an Error whose message becomes the -32603 text of a failed
 * `process/start` (an `RpcError` is passed through unchanged, e.g. -32602 for an unusable sandbox).
 */
export type Spawner = (request: LocalSpawnRequest) => Promise<LocalSpawnResult>;

/** The output of a finished sandboxed command, as denial detection reads it. */
export type SandboxedOutput = CommandOutput;

/** Decides whether a sandboxed command most likely failed because the sandbox denied it. */
export type SandboxDenialCheck = (sandboxType: SandboxType, output: SandboxedOutput) => boolean;
