import { realpathSync, statSync } from 'node:fs';
import { ExecError } from '@execd/protocol';
import { canonicalDir } from './internal/safe-fs.ts';

/**
 * The canonical paths of an environment's writable roots, pinned the first time each is
 * resolved. A sandboxed command can write its roots' parents' siblings (e.g. under `$TMPDIR`):
 * if it replaces a folder on a root's path with a symlink to `/etc`, resolving the root again at
 * the next launch would make `/etc` writable. Pinned, a root whose resolution changed is refused.
 *
 * One instance per environment (an exec-server session, a unified-exec environment); the
 * module's {@link DEFAULT_ROOT_PINS} serves callers that pass none, for the life of the process.
 */
export class SandboxRootPins {
  readonly #pins = new Map<string, string>();

  /**
   * The canonical path of the directory `path` (absolute, as configured), or undefined when it
   * does not exist (a missing root is skipped, not pinned). Throws `invalidParams` when `path`
   * resolved to another directory before.
   */
  async resolve(path: string): Promise<string | undefined> {
    const canonical = await canonicalDir(path);
    const pinned = this.#pins.get(path);
    if (canonical === undefined) return undefined;
    if (pinned === undefined) {
      this.#pins.set(path, canonical);
      return canonical;
    }
    if (pinned !== canonical) {
      throw new ExecError(
        'invalidParams',
        `sandbox writable root ${JSON.stringify(path)} now resolves to ${JSON.stringify(canonical)}, not ${JSON.stringify(pinned)} as when it was first used: a folder on its path was replaced (refusing to make the new target writable)`,
      );
    }
    return canonical;
  }

  /** Pins every path (errors as {@link resolve}). */
  async pin(paths: Iterable<string>): Promise<void> {
    for (const path of paths) await this.resolve(path);
  }

  /**
   * Pins every existing directory among `paths` synchronously, for a constructor: the roots are
   * fixed the moment the environment exists, before anything can run. Only `stat`/`realpath`
   * (no file is opened). A path pinned before is left as it was.
   */
  pinNow(paths: Iterable<string>): void {
    for (const path of paths) {
      if (this.#pins.has(path)) continue;
      try {
        if (statSync(path).isDirectory()) this.#pins.set(path, realpathSync(path));
      } catch {
        // Missing: pinned at first use instead.
      }
    }
  }

  /** The pinned canonical path of `path`, if any. */
  pinned(path: string): string | undefined {
    return this.#pins.get(path);
  }
}

/** The pins of callers that pass none: first resolution wins for the life of this process. */
export const DEFAULT_ROOT_PINS: SandboxRootPins = new SandboxRootPins();
