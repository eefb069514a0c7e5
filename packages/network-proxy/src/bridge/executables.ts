import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Searched after `$PATH`: `ip` lives in /usr/sbin or /sbin, which are often missing from a user's PATH. */
const FALLBACK_DIRS: readonly string[] = [
  '/usr/local/sbin',
  '/usr/local/bin',
  '/usr/sbin',
  '/usr/bin',
  '/sbin',
  '/bin',
];

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Absolute path of `name` on `searchPath` (then the system dirs), or undefined. */
export function findExecutable(
  name: string,
  searchPath: string = process.env.PATH ?? '',
): string | undefined {
  if (name.includes('/')) return isExecutable(name) ? name : undefined;
  const dirs = [...searchPath.split(delimiter).filter((dir) => dir.startsWith('/')), ...FALLBACK_DIRS];
  for (const dir of dirs) {
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Where the bridge script is: `bridge.js` next to the bundle (`dist/`), or, when this module runs
 * from `src/` (tests), the package's built `dist/bridge.js`. Undefined when neither exists.
 */
export function defaultBridgeScript(): string | undefined {
  const candidates = [
    new URL('./bridge.js', import.meta.url),
    new URL('../../dist/bridge.js', import.meta.url),
  ];
  for (const candidate of candidates) {
    const path = fileURLToPath(candidate);
    try {
      accessSync(path, constants.R_OK);
      return path;
    } catch {
      // try the next one
    }
  }
  return undefined;
}
