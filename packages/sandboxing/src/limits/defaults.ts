import { totalmem } from 'node:os';
import type { CommandLimits } from './resource-control.ts';

const GIB = 1024 ** 3;

/**
 * 1024 tasks. The pids controller counts threads too, so this is what a fork bomb is allowed
 * before its forks fail with EAGAIN: far below the host's pid space (`kernel.pid_max` is 32768
 * on some hosts, 4M on others, shared with everything else), far above what real work needs
 * (`make -j$(nproc)` with compilers, a test runner with workers, a JVM with ~100 threads).
 */
export const DEFAULT_MAX_PROCESSES = 1024;

/**
 * 4 GiB, or half the RAM on smaller machines: enough for a big link or a test suite, while a
 * runaway command leaves the executor and its other commands the other half. A limit on the
 * executor's own cgroup (a container's) still applies above this one: command groups are
 * created under it.
 */
export const DEFAULT_MAX_MEMORY_BYTES: number = Math.min(4 * GIB, Math.floor(totalmem() / 2 / 4096) * 4096);

/**
 * 4 GiB per file. RLIMIT_FSIZE bounds each file, not the disk: it stops the common runaway
 * (`yes > out`, a log in a loop, `cat /dev/zero > x`) at 4 GiB instead of a full disk, and
 * stays above the single files agents legitimately write (release binaries, wheels, the largest
 * CUDA wheels are ~2.5 GB, container layers, test databases). Raise it for full-history clones
 * of huge repositories (one pack file) or VM images. Many files can still fill a disk: that
 * needs a filesystem quota or a size-limited mount, out of reach of a launcher.
 */
export const DEFAULT_MAX_FILE_BYTES: number = 4 * GIB;

/**
 * The limits a command gets unless configured otherwise. No CPU-time limit: builds and test
 * suites legitimately run for long, and the tool layer already bounds a command's wall time.
 */
export const DEFAULT_COMMAND_LIMITS: Readonly<CommandLimits> = Object.freeze({
  maxProcesses: DEFAULT_MAX_PROCESSES,
  maxMemoryBytes: DEFAULT_MAX_MEMORY_BYTES,
  maxFileBytes: DEFAULT_MAX_FILE_BYTES,
});
