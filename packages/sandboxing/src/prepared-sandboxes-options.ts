import type { Logger } from '@execd/protocol';
import type { WaiterKind } from './linux/waiter.ts';
import type { SpawnResult } from './spawn.ts';

/** Options of {@link PreparedSandboxes}. */
export interface PreparedSandboxesOptions {
  /** How long a prepared sandbox waits for a command before it is ended (default 60 s). */
  readonly idleMs?: number | undefined;
  /**
   * How long a command may run before the next sandbox of its kind is prepared while it still
   * runs (default 250 ms); a command that closes sooner gets it prepared once it closed.
   */
  readonly refillAfterMs?: number | undefined;
  /** At most this many wait at once, one per kind of command; the oldest makes room (default 4). */
  readonly max?: number | undefined;
  /**
   * What a waiting sandbox may run (default `['perl', 'bash']`): perl execs the command itself;
   * bash execs it through GNU `env -i` (one exec more: ~0.6 ms on the command's start here). A
   * sandbox that cannot read the whole disk runs bash.
   */
  readonly waiters?: readonly WaiterKind[] | undefined;
  /**
   * Called with each sandbox as it starts waiting; what it returns is kept, handed to the command
   * that takes it (with `prepared: true`) and closed when it is ended: e.g. exec-server's
   * `guardSpawned`, which guards the process against outliving this one until it is closed.
   */
  readonly onStarted?: ((result: SpawnResult) => SpawnResult) | undefined;
  readonly logger?: Logger | undefined;
}

/** Why a waiter ended without a command. */
export type WaiterEnd = 'unusable' | 'died' | 'idle' | 'evicted' | 'closed';

/** What a {@link PreparedSandboxes} did since it was made (for metrics). */
export interface PreparedSandboxStats {
  /** Sandboxes waiting or starting now. */
  readonly waiting: number;
  /** Sandboxes started to wait. */
  readonly started: number;
  /**
   * Commands of a kind that can be prepared for, by how they started: in a waiter, or cold (none
   * of their kind was there, or it could not serve them).
   */
  readonly commands: { readonly prepared: number; readonly cold: number };
  /**
   * Waiters ended without a command: `unusable` (the command's plan or a folder differed, or it
   * could not be handed over), `died`, `idle` (`idleMs` passed), `evicted` (`max`), `closed`.
   */
  readonly ended: Readonly<Record<WaiterEnd, number>>;
}
