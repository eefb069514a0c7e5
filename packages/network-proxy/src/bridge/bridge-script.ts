import { accessSync, constants } from 'node:fs';
import { fileURLToPath } from 'node:url';

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
