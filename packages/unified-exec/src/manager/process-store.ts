import {
  MAX_UNIFIED_EXEC_PROCESSES,
  PROCESS_ID_MAX,
  PROCESS_ID_MIN,
  PRUNE_PROTECTED_RECENT_PROCESSES,
} from '../constants.ts';
import type { UnifiedExecProcess } from '../process/unified-exec-process.ts';

/** A live (or exited but not yet reported) process the model can talk to. */
export interface ProcessEntry {
  readonly process: UnifiedExecProcess;
  /** The exec_command call that started it. */
  readonly callId: string;
  /** The model-facing id (`session_id`). */
  readonly processId: number;
  /** argv, shell included. */
  readonly command: readonly string[];
  /** The model's `cmd` (what listings show). */
  readonly hookCommand: string;
  readonly cwd: string;
  readonly environmentId: string;
  readonly tty: boolean;
  /** Recency stamp: larger is more recent (a counter, so ties cannot happen). */
  lastUsed: number;
}

/** What pruning looks at per process. */
export interface PruneCandidate {
  readonly processId: number;
  readonly lastUsed: number;
  readonly exited: boolean;
  /** Its interaction lock is held (a call is using it right now). */
  readonly locked: boolean;
}

/**
 * Which process to evict when the store is full (spec §4.5): the 8 most recently used are
 * protected; among the others, the least recently used exited process, else the least recently
 * used one. Locked processes are skipped, and when an exited candidate exists but is locked (it
 * is being finalised) no live process is evicted instead: undefined, and the store may exceed
 * its cap for a moment.
 */
export function processIdToPrune(candidates: readonly PruneCandidate[]): number | undefined {
  if (candidates.length === 0) return undefined;
  const protectedIds = new Set(
    [...candidates]
      .sort((a, b) => b.lastUsed - a.lastUsed)
      .slice(0, PRUNE_PROTECTED_RECENT_PROCESSES)
      .map((candidate) => candidate.processId),
  );
  const lru = candidates
    .filter((candidate) => !protectedIds.has(candidate.processId))
    .sort((a, b) => a.lastUsed - b.lastUsed);
  const exited = lru.filter((candidate) => candidate.exited);
  if (exited.length > 0) return exited.find((candidate) => !candidate.locked)?.processId;
  return lru.find((candidate) => !candidate.locked)?.processId;
}

/** Options of a ProcessStore. */
export interface ProcessStoreOptions {
  /** `deterministic`: ids 1000, then max(reserved)+1 (tests); `random` (default): [1000, 100000). */
  readonly processIds?: 'random' | 'deterministic' | undefined;
  /** Random source in [0, 1) for ids (default Math.random). */
  readonly random?: (() => number) | undefined;
}

/**
 * The processes of one manager and the ids reserved for them (the original's `ProcessStore`).
 * An id is reserved before its process is spawned and released on every failure, and when the
 * process is reported exited or terminated.
 */
export class ProcessStore {
  readonly #entries = new Map<number, ProcessEntry>();
  readonly #reserved = new Set<number>();
  readonly #deterministic: boolean;
  readonly #random: () => number;
  #useCounter = 0;

  constructor(options: ProcessStoreOptions = {}) {
    this.#deterministic = options.processIds === 'deterministic';
    this.#random = options.random ?? Math.random;
  }

  /** Number of stored processes. */
  get size(): number {
    return this.#entries.size;
  }

  /** Number of reserved ids (stored processes plus launches in progress). */
  get reservedCount(): number {
    return this.#reserved.size;
  }

  /** Reserves and returns a fresh id. */
  allocate(): number {
    for (;;) {
      const id = this.#deterministic
        ? this.#reserved.size === 0
          ? PROCESS_ID_MIN
          : Math.max(...this.#reserved, PROCESS_ID_MIN - 1) + 1
        : PROCESS_ID_MIN + Math.floor(this.#random() * (PROCESS_ID_MAX - PROCESS_ID_MIN));
      if (this.#reserved.has(id)) continue;
      this.#reserved.add(id);
      return id;
    }
  }

  /** Whether `id` is reserved. */
  isReserved(id: number): boolean {
    return this.#reserved.has(id);
  }

  /** The next recency stamp. */
  touch(): number {
    this.#useCounter += 1;
    return this.#useCounter;
  }

  /** The stored process with this id. */
  get(id: number): ProcessEntry | undefined {
    return this.#entries.get(id);
  }

  /**
   * Stores an entry, first evicting one per {@link processIdToPrune} when the store holds 64 or
   * more. Returns the evicted entry (the caller terminates it).
   */
  insert(entry: ProcessEntry): ProcessEntry | undefined {
    let pruned: ProcessEntry | undefined;
    if (this.#entries.size >= MAX_UNIFIED_EXEC_PROCESSES) {
      const victim = processIdToPrune(
        [...this.#entries.values()].map((candidate) => ({
          processId: candidate.processId,
          lastUsed: candidate.lastUsed,
          exited: candidate.process.hasExited,
          locked: candidate.process.interactionLock.isLocked,
        })),
      );
      if (victim !== undefined) pruned = this.remove(victim);
    }
    this.#entries.set(entry.processId, entry);
    this.#reserved.add(entry.processId);
    return pruned;
  }

  /** Removes an entry and releases its id; returns the entry if there was one. */
  remove(id: number): ProcessEntry | undefined {
    const entry = this.#entries.get(id);
    this.#entries.delete(id);
    this.#reserved.delete(id);
    return entry;
  }

  /** Every entry, sorted by id. */
  entries(): ProcessEntry[] {
    return [...this.#entries.values()].sort((a, b) => a.processId - b.processId);
  }

  /** Removes every entry and every reservation; returns the removed entries. */
  drain(): ProcessEntry[] {
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    this.#reserved.clear();
    return entries;
  }
}
