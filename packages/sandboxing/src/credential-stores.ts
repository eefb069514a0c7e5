import { join } from 'node:path';
import type { PolicyPath } from './policy.ts';

/**
 * Credential stores under the executor user's home that sandboxed commands may not read under
 * `read-only` and `workspace-write` (both wire forms), unless the policy names them explicitly.
 * An execd default beyond the original (which leaves them readable).
 */
export const CREDENTIAL_STORES: readonly string[] = [
  '.ssh',
  '.aws',
  '.gnupg',
  '.config/gcloud',
  '.netrc',
  '.docker/config.json',
  '.kube/config',
];

function within(root: string, path: string): boolean {
  return root === '/' || path === root || path.startsWith(`${root}/`);
}

/**
 * The credential stores of `home` to deny, leaving out any that an explicit grant names: a grant
 * on the store itself or inside it (a grant of a broad parent such as the home folder does not
 * count). Missing stores are skipped, not masked.
 */
export function credentialStoreDenials(
  home: string | undefined,
  explicitGrants: readonly string[],
): PolicyPath[] {
  if (home === undefined || !home.startsWith('/')) return [];
  return CREDENTIAL_STORES.map((name) => join(home, name))
    .filter((store) => !explicitGrants.some((grant) => within(store, grant)))
    .map((path) => ({ path, skipMissing: true }));
}
