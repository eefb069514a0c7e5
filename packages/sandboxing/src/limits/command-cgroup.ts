import { mkdirSync, rmdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { ExecError, type Logger, NOOP_LOGGER } from '@execd/protocol';
import { describeError } from './candidate.ts';
import { errnoCode } from './cgroup-fs.ts';
import { type CpuWatch, watchCpuTime } from './cpu-watch.ts';
import {
  applyLimits,
  type GroupLayout,
  groupLayout,
  readCpuSeconds,
  readGroupEvents,
} from './group-layout.ts';
import { commandGroupName, type GroupOwner, groupOwner } from './group-name.ts';
import { KILL_POLL_INTERVAL_MS, killGroup } from './kill-group.ts';
import type { CommandLimits, LimitEvents, ResourceControl } from './resource-control.ts';
import { validateLimits } from './validate-limits.ts';

/**
 * How long `close()` (and a CPU-limit kill) waits for SIGKILLed processes to leave the group.
 * They normally go within milliseconds; one stuck in uninterruptible sleep (a hung NFS read)
 * cannot die, and closing must not hang on it. The group is then left for the next start's sweep.
 */
export const CLOSE_TIMEOUT_MS = 5_000;

/** One command's cgroup(s). Create one per command; the launcher joins it before exec. */
export interface CommandCgroup extends AsyncDisposable {
  /** The group's name: `<pidns>.<executor pid>.<start time>.<id>`. */
  readonly name: string;
  /** The cgroup.procs file(s) the launcher writes its own pid into before exec'ing bubblewrap. */
  readonly procsFiles: readonly string[];
  /**
   * cgroup v1: the executor's own groups' `tasks` files, one per `procsFiles` entry. With them a
   * spawn forks from inside the group (pty-utils' `cgroupHome`) instead of joining through a wrapper.
   */
  readonly homeTasksFiles?: readonly string[];
  /** The group's directories (one on v2, one per controller on v1). */
  readonly paths: readonly string[];
  /** The limits in force: those requested that this host's controllers can enforce. */
  readonly limits: CommandLimits;
  /** What the group saw so far; after `close()`, what it saw until then. */
  readEvents(): Promise<LimitEvents>;
  /** CPU time used so far by all its processes, in seconds (`undefined` without CPU accounting); after `close()`, until then. */
  readCpuSeconds(): Promise<number | undefined>;
  /** SIGKILLs every process in the group (daemons in their own session too) and waits for them (bounded). */
  killAll(): Promise<void>;
  /** Idempotent, never throws: stops the CPU watch, kills everything, waits (bounded), removes the group. */
  close(): Promise<void>;
}

/** Options of {@link createCommandCgroup}. */
export interface CreateCommandCgroupOptions {
  /** Unique among this executor's live groups, `[A-Za-z0-9_-]{1,64}` (default: a counter). */
  readonly id?: string | undefined;
  readonly logger?: Logger | undefined;
  readonly cpuPollIntervalMs?: number | undefined;
  readonly closeTimeoutMs?: number | undefined;
}

let nextId = 0;
let self: Promise<GroupOwner> | undefined;

function createDirectories(layout: GroupLayout): void {
  const created: string[] = [];
  try {
    // Synchronous, as every cgroup call (see cgroup-fs.ts).
    for (const path of layout.paths) {
      mkdirSync(path);
      created.push(path);
    }
  } catch (error) {
    for (const path of created) {
      try {
        rmdirSync(path);
      } catch {
        // Swept at the next start.
      }
    }
    if (errnoCode(error) === 'EEXIST') {
      throw new ExecError('invalidParams', `a command cgroup named ${layout.paths[0]} already exists`, {
        cause: error,
      });
    }
    throw new ExecError('unsupported', `cannot create command cgroup: ${describeError(error)}`, {
      cause: error,
    });
  }
}

async function removeDirectories(layout: GroupLayout, deadline: number): Promise<string[]> {
  let left = [...layout.paths];
  for (;;) {
    const failed: string[] = [];
    for (const path of left) {
      try {
        rmdirSync(path);
      } catch (error) {
        if (errnoCode(error) !== 'ENOENT') failed.push(path);
      }
    }
    left = failed;
    if (left.length === 0 || Date.now() > deadline) return left;
    await killGroup({ procsFiles: layout.procsFiles, killFile: layout.killFile, deadline });
    await sleep(KILL_POLL_INTERVAL_MS);
  }
}

/**
 * Creates a command group under `control`'s parent(s) and writes `limits` into it (those the
 * controllers allow; `limits` on the result says which). Throws `unsupported` when `control`
 * is `none` or the group cannot be set up, `invalidParams` for bad limits or a duplicate id.
 * `maxFileBytes` is not a cgroup limit: pass it to `launcherLimitLines`.
 */
export async function createCommandCgroup(
  control: ResourceControl,
  limits: CommandLimits,
  options: CreateCommandCgroupOptions = {},
): Promise<CommandCgroup> {
  validateLimits(limits);
  if (control.kind === 'none') {
    throw new ExecError('unsupported', `resource limits cannot be enforced here: ${control.reason}`);
  }
  const logger = options.logger ?? NOOP_LOGGER;
  const closeTimeoutMs = options.closeTimeoutMs ?? CLOSE_TIMEOUT_MS;
  self ??= groupOwner();
  const name = commandGroupName(await self, options.id ?? String(++nextId));
  const layout = groupLayout(control, name);
  createDirectories(layout);
  let applied: CommandLimits;
  try {
    applied = await applyLimits(layout, limits);
  } catch (error) {
    await removeDirectories(layout, Date.now());
    throw new ExecError('unsupported', `cannot set limits on ${name}: ${describeError(error)}`, {
      cause: error,
    });
  }
  let closing: Promise<void> | undefined;
  const killAll = async (): Promise<void> => {
    // Closing kills everything first, then removes the group: no file of it to read again.
    if (closing !== undefined) return closing;
    const emptied = await killGroup({
      procsFiles: layout.procsFiles,
      killFile: layout.killFile,
      deadline: Date.now() + closeTimeoutMs,
    });
    if (!emptied) logger.warn('command cgroup still has processes after SIGKILL', { name });
  };
  let cpuWatch: CpuWatch | undefined;
  if (applied.maxCpuSeconds !== undefined) {
    cpuWatch = watchCpuTime({
      read: () => readCpuSeconds(layout),
      limitSeconds: applied.maxCpuSeconds,
      onExceeded: async () => {
        logger.debug('command cgroup used up its CPU time; killing it', {
          name,
          limit: applied.maxCpuSeconds,
        });
        await killAll();
      },
      intervalMs: options.cpuPollIntervalMs,
      onError: (error) =>
        logger.warn('CPU-time watch failed; the limit is no longer enforced', { name, error }),
    });
  }
  const readEvents = async (): Promise<LimitEvents> => {
    const events = await readGroupEvents(layout);
    return cpuWatch === undefined ? events : { ...events, cpuLimitHit: cpuWatch.exceeded };
  };
  let final: { events: LimitEvents; cpuSeconds: number | undefined } | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      cpuWatch?.stop();
      const deadline = Date.now() + closeTimeoutMs;
      try {
        await killGroup({ procsFiles: layout.procsFiles, killFile: layout.killFile, deadline });
        const [events, cpuSeconds] = await Promise.all([readEvents(), readCpuSeconds(layout)]);
        final = { events, cpuSeconds };
        const left = await removeDirectories(layout, deadline);
        if (left.length > 0) logger.warn('command cgroup could not be removed', { name, left });
      } catch (error) {
        // Never throws: what is left is swept at the next start (its owner will be gone).
        logger.warn('closing command cgroup failed', { name, error });
      }
    })();
    return closing;
  };
  logger.debug('command cgroup created', { name, limits: applied });
  return {
    name,
    procsFiles: layout.procsFiles,
    ...(layout.homeTasksFiles === undefined ? {} : { homeTasksFiles: layout.homeTasksFiles }),
    paths: layout.paths,
    limits: applied,
    readEvents: async () => final?.events ?? (await readEvents()),
    readCpuSeconds: async () => (final ? final.cpuSeconds : await readCpuSeconds(layout)),
    killAll,
    close,
    [Symbol.asyncDispose]: close,
  };
}
