import { createHash } from 'node:crypto';

/**
 * The version execd reports as `executorVersion` (`environment/info`). Kept equal to this
 * package's `package.json` version by a test (the built files do not read package.json).
 */
export const EXECD_VERSION = '0.1.0';

/**
 * `providerId` of `environment/info`: `sha256:` and the hex SHA-256 of the executor program's
 * name and version. Like the original's, it is the same on every host and every start of one
 * server version (its derivation is not published; only the `sha256:` form is matched).
 */
export const EXECD_PROVIDER_ID: string = `sha256:${createHash('sha256')
  .update(`execd-exec-server@${EXECD_VERSION}`)
  .digest('hex')}`;

/** `platformOs` of `environment/info`: the original's names for Node's platforms. */
export function platformOs(platform: NodeJS.Platform = process.platform): string {
  if (platform === 'darwin') return 'macos';
  if (platform === 'win32') return 'windows';
  return platform;
}
