import { closeSync, readSync, writeSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { type Logger, NOOP_LOGGER } from '@execd/protocol';
import { DEFAULT_PTY_COLS, DEFAULT_PTY_ROWS, type SpawnedProcess } from '@execd/pty-utils';
import { openUnnamedFile } from './internal/unnamed-file.ts';
import { mountFingerprint } from './linux/mount-fingerprint.ts';
import {
  encodeWaiterPayload,
  goWaiter,
  hostWaiterPrograms,
  WAITING_LINE,
  type WaiterKind,
} from './linux/waiter.ts';
import type {
  PreparedSandboxesOptions,
  PreparedSandboxStats,
  WaiterEnd,
} from './prepared-sandboxes-options.ts';
import {
  planForWaiter,
  type SpawnRequest,
  type SpawnResult,
  type StartedWaiter,
  startWaiter,
} from './spawn.ts';

/** A started waiter of one kind of command. */
interface Started extends StartedWaiter {
  readonly payloadFd: number;
  /** The waiter's process has closed (it died, or was ended). */
  ended: boolean;
}

interface Waiter {
  readonly key: string;
  /** The request it was planned from: options compared by identity live here. */
  readonly request: SpawnRequest;
  readonly started: Promise<Started | undefined>;
  idleTimer?: NodeJS.Timeout;
}

const DEFAULT_IDLE_MS = 60_000;
const DEFAULT_MAX = 4;
/** Kinds of command remembered to tell a kind that repeats from a one-off. */
const MAX_SEEN = 64;
/** Waiters that die before a command takes them, in a row, before the pool stops preparing. */
const MAX_CONSECUTIVE_DEATHS = 3;
/** How long a command waits for a just-started sandbox's waiter to run (bubblewrap setting up). */
const READY_TIMEOUT_MS = 2_000;

/**
 * The kind of command a waiter can serve: everything of the request its sandbox is planned
 * from, but the program, its arguments and its environment. Undefined when the command's sandbox
 * cannot be prepared: not bubblewrap, routed through a managed network, or an `arg0` override.
 */
function waiterKey(request: SpawnRequest): string | undefined {
  const sandbox = request.sandbox;
  if (process.platform !== 'linux' || sandbox?.type !== 'linuxSeccomp') return undefined;
  if (request.managedNetwork !== undefined && sandbox.policy.network === 'proxied') return undefined;
  if (request.arg0 !== undefined && request.arg0 !== request.command[0]) return undefined;
  return JSON.stringify([
    sandbox.policy,
    request.cwd,
    request.tty,
    request.tty || request.stdinOpen,
    request.drainTimeoutMs ?? null,
    request.limits ?? null,
    request.bwrapSearchPath ?? null,
    request.hiddenPaths ?? null,
  ]);
}

function sameOwners(a: SpawnRequest, b: SpawnRequest): boolean {
  return a.rootPins === b.rootPins && a.resourceControl === b.resourceControl;
}

/**
 * How long a command may run before the next sandbox of its kind is prepared while it still
 * runs. Most of an agent's commands (`ls`, `cat`, `rg`) are done sooner, and then it is prepared
 * once they closed; a longer one gets it meanwhile, for a second command of its kind.
 */
const DEFAULT_REFILL_AFTER_MS = 250;

/**
 * Sandboxes started before their commands are asked for. Starting bubblewrap (user, mount, pid,
 * network namespaces, the mounts, `/proc`) is most of what a sandboxed command costs to start;
 * a prepared sandbox has done all of it and waits, fully confined, in a small perl (or bash) waiter for the
 * command line (see `linux/waiter.ts`). Pass the pool as `spawnProcess`'s `preparedSandboxes`:
 * after a bubblewrap command of a kind that came before (within `idleMs`), one sandbox of the
 * same kind is started to wait for the next;
 * the next command of that kind is planned as usual (every check a cold start makes, against the
 * disk as it is then) and takes the waiter only when the plan's command line is identical to the
 * waiter's but for the command's environment and argv; otherwise the waiter is ended and the
 * command starts cold. A waiter holds what its sandbox holds: its cgroup and its placeholders
 * (the empty `.git`, `.codex`, `.agents` mount points in a workspace lacking them stay while it
 * waits), so idle ones end after `idleMs`, and {@link close} ends them all.
 */
export class PreparedSandboxes {
  readonly #idleMs: number;
  readonly #refillAfterMs: number;
  readonly #max: number;
  readonly #waiterKinds: readonly WaiterKind[];
  readonly #onStarted: ((result: SpawnResult) => SpawnResult) | undefined;
  readonly #logger: Logger;
  readonly #waiters = new Map<string, Waiter>();
  readonly #ending = new Set<Promise<void>>();
  /** When each kind of command last came (oldest first), to prepare only for kinds that repeat. */
  readonly #seen = new Map<string, number>();
  #deaths = 0;
  #startedCount = 0;
  readonly #commands = { prepared: 0, cold: 0 };
  readonly #ended: Record<WaiterEnd, number> = { unusable: 0, died: 0, idle: 0, evicted: 0, closed: 0 };
  #disabled = false;
  #closed = false;

  constructor(options: PreparedSandboxesOptions = {}) {
    this.#idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
    this.#refillAfterMs = options.refillAfterMs ?? DEFAULT_REFILL_AFTER_MS;
    this.#max = options.max ?? DEFAULT_MAX;
    this.#waiterKinds = options.waiters ?? ['perl', 'bash'];
    this.#onStarted = options.onStarted;
    this.#logger = options.logger ?? NOOP_LOGGER;
  }

  /** How many sandboxes are waiting or starting. */
  get size(): number {
    return this.#waiters.size;
  }

  /** What this pool did since it was made. */
  stats(): PreparedSandboxStats {
    return {
      waiting: this.#waiters.size,
      started: this.#startedCount,
      commands: { ...this.#commands },
      ended: { ...this.#ended },
    };
  }

  /**
   * Runs `request` in a waiting sandbox of its kind, when there is one and the command's own plan
   * matches it; undefined otherwise (start it cold). Throws what planning the command throws.
   */
  async take(request: SpawnRequest): Promise<SpawnResult | undefined> {
    const key = this.#closed ? undefined : waiterKey(request);
    if (key === undefined) return undefined;
    const taken = await this.#take(key, request);
    this.#commands[taken === undefined ? 'cold' : 'prepared'] += 1;
    return taken;
  }

  async #take(key: string, request: SpawnRequest): Promise<SpawnResult | undefined> {
    const waiter = this.#waiters.get(key);
    if (waiter === undefined || !sameOwners(waiter.request, request)) return undefined;
    this.#waiters.delete(key);
    clearTimeout(waiter.idleTimer);
    const started = await waiter.started;
    if (started === undefined) return undefined;
    let handedOver = false;
    try {
      const plan = await planForWaiter(request, started.launcherPreamble);
      if (plan?.identity !== started.identity) {
        this.#logger.debug('sandboxing: the command plans another sandbox than the prepared one', {
          prepared: started.identity,
          planned: plan?.identity,
        });
      }
      const same =
        plan !== undefined &&
        plan.identity === started.identity &&
        (await this.#standsWhereItWas(started, plan.mountPaths));
      if (!same) return undefined;
      const payload = encodeWaiterPayload(plan.payload);
      if (payload === undefined) {
        this.#logger.debug(
          'sandboxing: the command cannot be handed to a waiter (a NUL, a variable name with =, or = in the program name); starting cold',
        );
        return undefined;
      }
      if (!(await this.#ready(started))) {
        this.#logger.debug('sandboxing: the prepared sandbox died or never got ready; starting cold');
        return undefined;
      }
      // Checked again with nothing awaited until the go: once closed, the fd number is not ours.
      if (started.ended) return undefined;
      const { process: child } = started.result;
      // The size asked for, or a cold start's default: the waiter's is its first command's.
      if (child.tty) child.resize(request.cols ?? DEFAULT_PTY_COLS, request.rows ?? DEFAULT_PTY_ROWS);
      writeAll(started.payloadFd, payload, WAITING_LINE.length);
      handedOver = goWaiter(child.pid);
      if (!handedOver) {
        this.#logger.debug('sandboxing: the prepared sandbox could not be told to go; starting cold');
        return undefined;
      }
      this.#deaths = 0;
      return { ...started.result, prepared: true };
    } finally {
      if (!handedOver) this.#end(started, 'unusable');
    }
  }

  /**
   * {@link refill} once `process` (a command of `request`'s kind, just started) has closed, or
   * after `refillAfterMs`. Starting a sandbox takes the CPU of a whole sandboxed launch: started
   * at once it ran beside the command it was prepared after and, on two cores, made a prepared
   * `echo hi` take 20.5 ms to close instead of 14.6 (cold: 32-35 ms).
   */
  refillAfter(request: SpawnRequest, process: SpawnedProcess): void {
    let done = false;
    const refill = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      this.refill(request);
    };
    const timer = setTimeout(refill, this.#refillAfterMs);
    timer.unref();
    void process.closed.then(refill, refill);
  }

  /**
   * Starts a sandbox of `request`'s kind to wait for the next such command, unless one waits, or
   * this kind did not come before within `idleMs` (a one-off kind would only cost a sandbox).
   */
  refill(request: SpawnRequest): void {
    const key = this.#closed || this.#disabled ? undefined : waiterKey(request);
    if (key === undefined || !this.#repeats(key) || this.#waiters.has(key)) return;
    if (this.#waiters.size >= this.#max) {
      const oldest = this.#waiters.values().next().value as Waiter;
      this.#drop(oldest, 'evicted');
    }
    const waiter: Waiter = { key, request, started: this.#start(request) };
    this.#waiters.set(key, waiter);
    void waiter.started.then((started) => {
      if (started === undefined) {
        if (this.#waiters.get(key) === waiter) this.#waiters.delete(key);
        return;
      }
      if (this.#waiters.get(key) !== waiter) return;
      waiter.idleTimer = setTimeout(() => this.#drop(waiter, 'idle'), this.#idleMs);
      waiter.idleTimer.unref();
      void started.result.process.closed.then(() => {
        if (this.#waiters.get(key) !== waiter) return;
        // Died while waiting: nothing of ours ended it.
        this.#waiters.delete(key);
        clearTimeout(waiter.idleTimer);
        this.#deaths += 1;
        this.#ended.died += 1;
        if (this.#deaths >= MAX_CONSECUTIVE_DEATHS && !this.#disabled) {
          this.#disabled = true;
          this.#logger.warn('sandboxing: prepared sandboxes keep dying before use; sandboxes start cold', {
            deaths: this.#deaths,
          });
        }
      });
    });
  }

  /**
   * Resolves once every sandbox being prepared waits for its command (or failed to start): a
   * command asked for then finds its sandbox ready. For benchmarks and tests.
   */
  async settled(): Promise<void> {
    for (const waiter of [...this.#waiters.values()]) {
      const started = await waiter.started;
      if (started !== undefined) await this.#ready(started);
    }
  }

  /** Notes that a command of this kind came now; true when one came before within `idleMs`. */
  #repeats(key: string): boolean {
    const now = Date.now();
    const last = this.#seen.get(key);
    this.#seen.delete(key);
    this.#seen.set(key, now);
    if (this.#seen.size > MAX_SEEN) this.#seen.delete(this.#seen.keys().next().value as string);
    return last !== undefined && now - last <= this.#idleMs;
  }

  /** Ends every waiting sandbox and prepares no more (idempotent). */
  async close(): Promise<void> {
    this.#closed = true;
    for (const waiter of [...this.#waiters.values()]) this.#drop(waiter, 'closed');
    while (this.#ending.size > 0) await Promise.all(this.#ending);
  }

  async #start(request: SpawnRequest): Promise<Started | undefined> {
    const programs = await hostWaiterPrograms(this.#waiterKinds);
    if (programs.perl === undefined && programs.env === undefined) {
      if (!this.#disabled)
        this.#logger.warn('sandboxing: no perl or GNU env for the sandbox waiter; sandboxes start cold');
      this.#disabled = true;
      return undefined;
    }
    const payloadFd = openUnnamedFile(new Uint8Array(0), 0o600);
    let launched: StartedWaiter;
    try {
      launched = await startWaiter(
        { ...request, preparedSandboxes: undefined },
        { payloadPath: `/proc/${process.pid}/fd/${payloadFd}`, programs },
      );
    } catch (error) {
      closeSync(payloadFd);
      this.#logger.debug('sandboxing: a sandbox could not be prepared', { error });
      return undefined;
    }
    const result = this.#onStarted?.(launched.result) ?? launched.result;
    const started: Started = { ...launched, result, payloadFd, ended: false };
    void result.process.closed.then(() => {
      started.ended = true;
      closeSync(payloadFd);
    });
    this.#startedCount += 1;
    if (this.#closed) this.#end(started, 'closed');
    return started;
  }

  /**
   * True when every folder the waiter's mounts were made on is still the one its path names:
   * one renamed away and replaced since (say a protected `.codex`, moved by a process outside
   * every sandbox: an approved unsandboxed command) would leave the waiter's mount on the old
   * folder and the new one unprotected. A cold start would mount the new one.
   */
  async #standsWhereItWas(started: Started, paths: readonly string[]): Promise<boolean> {
    const now = await mountFingerprint(paths);
    if (now === started.fingerprint) return true;
    this.#logger.debug('sandboxing: a folder the prepared sandbox mounted changed since; starting cold');
    return false;
  }

  /** Waits until the waiter runs inside its sandbox (false: it died first, or never did). */
  async #ready(started: Started): Promise<boolean> {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    const head = Buffer.alloc(WAITING_LINE.length);
    for (;;) {
      if (started.ended) return false;
      const read = readSync(started.payloadFd, head, 0, head.length, 0);
      if (read === head.length && head.toString() === WAITING_LINE) return true;
      if (Date.now() > deadline) return false;
      await delay(2);
    }
  }

  #drop(waiter: Waiter, why: WaiterEnd): void {
    if (this.#waiters.get(waiter.key) === waiter) this.#waiters.delete(waiter.key);
    clearTimeout(waiter.idleTimer);
    const ending = waiter.started.then((started) => {
      if (started !== undefined) this.#end(started, why);
    });
    this.#track(ending);
  }

  #end(started: Started, why: WaiterEnd): void {
    if (!started.ended) this.#ended[why] += 1;
    this.#track(started.result.process.close());
  }

  #track(ending: Promise<void>): void {
    const tracked = ending.catch(() => {}).finally(() => this.#ending.delete(tracked));
    this.#ending.add(tracked);
  }
}

/** Writes all of `bytes` at `position` of `fd`. */
function writeAll(fd: number, bytes: Uint8Array, position: number): void {
  let written = 0;
  while (written < bytes.length) {
    written += writeSync(fd, bytes, written, bytes.length - written, position + written);
  }
}
