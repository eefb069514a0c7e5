import { readFile } from 'node:fs/promises';
import { type Logger, NOOP_LOGGER } from '@execd/protocol';
import { type Candidate, candidateScore, describeError } from './candidate.ts';
import { probeCgroup1 } from './detect-cgroup1.ts';
import { probeCgroup2 } from './detect-cgroup2.ts';
import { parseCgroupMounts, parseProcCgroup } from './proc-cgroup.ts';
import type { ResourceControl } from './resource-control.ts';
import { sweepStaleCommandGroups } from './sweep.ts';

/** Options of {@link detectResourceControl}. */
export interface DetectResourceControlOptions {
  /** Hierarchies to consider, best first on a tie (default: `['cgroup2', 'cgroup1']`). */
  readonly kinds?: readonly ('cgroup2' | 'cgroup1')[] | undefined;
  /**
   * cgroup v2 only: when the executor's cgroup also holds processes other than the executor,
   * move them all into the `execd-executor` leaf so that controllers can be enabled (default
   * false: they are not execd's; limits are then reported as unavailable with the reason).
   */
  readonly moveProcessesToLeaf?: boolean | undefined;
  /** Remove empty command groups left by a crashed executor (default true). */
  readonly sweepStale?: boolean | undefined;
  /** Where procfs is (default `/proc`). */
  readonly procRoot?: string | undefined;
  readonly logger?: Logger | undefined;
}

const cache = new Map<string, Promise<ResourceControl>>();

async function detect(options: DetectResourceControlOptions): Promise<ResourceControl> {
  const procRoot = options.procRoot ?? '/proc';
  const kinds = options.kinds ?? ['cgroup2', 'cgroup1'];
  const [mountinfo, cgroupText] = await Promise.all([
    readFile(`${procRoot}/self/mountinfo`, 'utf8'),
    readFile(`${procRoot}/self/cgroup`, 'utf8'),
  ]);
  const mounts = parseCgroupMounts(mountinfo);
  const memberships = parseProcCgroup(cgroupText);
  const candidates: Candidate[] = [];
  for (const kind of kinds) {
    candidates.push(
      kind === 'cgroup2'
        ? await probeCgroup2(mounts, memberships, { moveProcessesToLeaf: options.moveProcessesToLeaf })
        : await probeCgroup1(mounts, memberships),
    );
  }
  // Stable sort: on equal scores the order of `kinds` decides.
  candidates.sort((a, b) => candidateScore(b.controllers) - candidateScore(a.controllers));
  for (const candidate of candidates) {
    if (candidate.controllers.length === 0) continue;
    const control = await candidate.prepare();
    if (control !== undefined) return control;
  }
  const reasons = candidates.flatMap((c) => c.reasons);
  return {
    kind: 'none',
    controllers: [],
    parent: undefined,
    reason: reasons.length > 0 ? reasons.join('; ') : 'no cgroup hierarchy is mounted',
  };
}

async function detectAndSweep(options: DetectResourceControlOptions): Promise<ResourceControl> {
  const logger = options.logger ?? NOOP_LOGGER;
  let control: ResourceControl;
  try {
    control = await detect(options);
  } catch (error) {
    control = {
      kind: 'none',
      controllers: [],
      parent: undefined,
      reason: `detection failed: ${describeError(error)}`,
    };
  }
  logger.debug('resource control detected', { ...control });
  if (control.kind !== 'none' && options.sweepStale !== false) {
    try {
      const swept = await sweepStaleCommandGroups(control, { procRoot: options.procRoot });
      if (swept.removed.length > 0 || swept.busy.length > 0)
        logger.info('stale command cgroups swept', { ...swept });
    } catch (error) {
      logger.warn('sweeping stale command cgroups failed', { error: describeError(error) });
    }
  }
  return control;
}

/**
 * Finds how per-command limits can be enforced here, prepares the `execd` parent group(s), and
 * sweeps groups left by a crashed executor. Never throws: when nothing works the result is
 * `{kind: 'none', reason}`. Memoized per set of options (the logger aside): call it at start and
 * reuse the result; detection changes the hierarchy (creates `execd`, may enable controllers and
 * move the executor into a leaf on v2), so doing it once is also the polite thing.
 */
export function detectResourceControl(options: DetectResourceControlOptions = {}): Promise<ResourceControl> {
  const key = JSON.stringify([
    options.kinds,
    options.moveProcessesToLeaf,
    options.sweepStale,
    options.procRoot,
  ]);
  let pending = cache.get(key);
  if (pending === undefined) {
    pending = detectAndSweep(options);
    cache.set(key, pending);
  }
  return pending;
}
