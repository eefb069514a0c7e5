import { fileURLToPath } from 'node:url';
import { defineConfig, type ViteUserConfig } from 'vitest/config';

/** When the leak check runs: after every test file, or also after every test. */
export type LeakCheckScope = 'file' | 'test';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Read by the leak check's setup file (`./setup.ts`). */
    execdLeakCheck: LeakCheckScope;
  }
}

/** Unit tests next to the code, integration tests in `test/` (house style rule 2). */
const DEFAULT_INCLUDE = ['src/**/*.test.ts', 'test/**/*.test.ts'];

/**
 * 30 s per test and hook: the tests spawn real shells, PTYs and sandboxes on a shared 2-core
 * machine; a test that passes takes a fraction of it.
 */
const DEFAULT_TIMEOUT_MS = 30_000;

const LEAK_CHECK_SETUP = fileURLToPath(new URL('./setup.ts', import.meta.url));

/** Options of {@link defineExecdConfig}; everything not given keeps the house default. */
export interface ExecdConfigOptions {
  /** Test file globs. Default: `src/**\/*.test.ts` and `test/**\/*.test.ts`. */
  readonly include?: readonly string[];
  /** Globs left out (vitest's default when not given). */
  readonly exclude?: readonly string[];
  /** Per-test, per-hook and teardown timeouts. Default 30 s each (teardown: vitest's). */
  readonly timeouts?: {
    readonly testMs?: number;
    readonly hookMs?: number;
    readonly teardownMs?: number;
  };
  /** Default `forks`: node-pty and process-wide state (cwd, env, signals) want processes. */
  readonly pool?: 'forks' | 'threads' | 'vmForks';
  /** Run test files in parallel (vitest's default) or one at a time. */
  readonly fileParallelism?: boolean;
  /** Setup files of the folder, run after the leak check's. */
  readonly setupFiles?: readonly string[];
  /** Global setup files (run once, in the main process). */
  readonly globalSetup?: readonly string[];
  /**
   * `test`: the leak check runs after every test as well as after every file. Default `file`.
   * A test's baseline is taken before it, so children a `beforeAll` started may live on.
   */
  readonly leakCheck?: LeakCheckScope;
}

/**
 * The vitest config of an execd test folder: each `vitest.config.ts` is
 * `export default defineExecdConfig({...})`, so `vitest run` works inside the package. Adds the
 * leak check (`./setup.ts`) to `setupFiles`.
 *
 * Import it by path (`../test-kit/src/vitest-config.ts`), not as `@execd/test-kit`: vite bundles
 * a config's relative imports but hands its package imports to Node, which cannot load this
 * package's TypeScript on Node 20.
 */
export function defineExecdConfig(options: ExecdConfigOptions = {}): ViteUserConfig {
  const timeouts = options.timeouts ?? {};
  return defineConfig({
    test: {
      include: [...(options.include ?? DEFAULT_INCLUDE)],
      ...(options.exclude === undefined ? {} : { exclude: [...options.exclude] }),
      pool: options.pool ?? 'forks',
      ...(options.fileParallelism === undefined ? {} : { fileParallelism: options.fileParallelism }),
      testTimeout: timeouts.testMs ?? DEFAULT_TIMEOUT_MS,
      hookTimeout: timeouts.hookMs ?? DEFAULT_TIMEOUT_MS,
      ...(timeouts.teardownMs === undefined ? {} : { teardownTimeout: timeouts.teardownMs }),
      setupFiles: [LEAK_CHECK_SETUP, ...(options.setupFiles ?? [])],
      ...(options.globalSetup === undefined ? {} : { globalSetup: [...options.globalSetup] }),
      provide: { execdLeakCheck: options.leakCheck ?? 'file' },
    },
  });
}
