import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `src/bridge/bridge-main.ts` bundled to plain JS (what `dist/bridge.js` is). */
    bridgeScript: string;
    /** `src/index.ts` bundled to one ESM file, for fixtures that run as separate node processes. */
    indexBundle: string;
  }
}

const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));

/**
 * The bridge runs as its own node process, so it must be JavaScript. Bundle the sources with
 * esbuild (already installed as a dependency of vite) into a temp dir, so the tests exercise the
 * current sources without depending on a fresh `dist/` (and without racing a concurrent build).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const requireFromVite = createRequire(createRequire(import.meta.url).resolve('vite'));
  const esbuild = requireFromVite('esbuild') as { build(options: Record<string, unknown>): Promise<unknown> };
  const outDir = await mkdtemp(join(tmpdir(), 'execd-netproxy-test-'));
  // Readable by the unprivileged user of the non-root test.
  await chmod(outDir, 0o755);
  const common = {
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'error',
  } as const;
  await esbuild.build({
    ...common,
    entryPoints: [join(PACKAGE_DIR, 'src/bridge/bridge-main.ts')],
    outfile: join(outDir, 'bridge.js'),
  });
  await esbuild.build({
    ...common,
    entryPoints: [join(PACKAGE_DIR, 'src/index.ts')],
    outfile: join(outDir, 'index.js'),
  });
  project.provide('bridgeScript', join(outDir, 'bridge.js'));
  project.provide('indexBundle', join(outDir, 'index.js'));
  return async () => {
    await rm(outDir, { recursive: true, force: true });
  };
}
