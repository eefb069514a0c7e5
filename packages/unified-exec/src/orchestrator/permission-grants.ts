import { isAbsolute, resolve } from 'node:path';
import type { AdditionalPermissions } from '../tools/exec-command-args.ts';

/** Extra access for one attempt, normalised: absolute, deduplicated, sorted paths. */
export interface PermissionGrant {
  readonly network: boolean;
  readonly read: readonly string[];
  readonly write: readonly string[];
}

/** No extra access. */
export const EMPTY_GRANT: PermissionGrant = Object.freeze({ network: false, read: [], write: [] });

function normalisePaths(paths: readonly string[] | undefined, cwd: string): string[] {
  return [
    ...new Set((paths ?? []).map((path) => (isAbsolute(path) ? resolve(path) : resolve(cwd, path)))),
  ].sort();
}

/**
 * The model's `additional_permissions` as a grant (the original's `normalize_additional_permissions`):
 * relative paths resolve against the command's cwd; `network.enabled: false` asks for nothing.
 */
export function grantFromAdditionalPermissions(
  permissions: AdditionalPermissions,
  cwd: string,
): PermissionGrant {
  return {
    network: permissions.network?.enabled === true,
    read: normalisePaths(permissions.file_system?.read, cwd),
    write: normalisePaths(permissions.file_system?.write, cwd),
  };
}

/** The union of two grants. */
export function mergeGrants(a: PermissionGrant, b: PermissionGrant): PermissionGrant {
  return {
    network: a.network || b.network,
    read: [...new Set([...a.read, ...b.read])].sort(),
    write: [...new Set([...a.write, ...b.write])].sort(),
  };
}

function covered(path: string, roots: readonly string[]): boolean {
  return roots.some((root) => path === root || path.startsWith(root.endsWith('/') ? root : `${root}/`));
}

/**
 * Whether `grant` asks for nothing beyond `granted` (then no question is asked: the original's
 * `permissions_preapproved`). A write grant covers reads of the same folder.
 */
export function grantCovers(granted: PermissionGrant, grant: PermissionGrant): boolean {
  if (grant.network && !granted.network) return false;
  if (!grant.write.every((path) => covered(path, granted.write))) return false;
  return grant.read.every((path) => covered(path, [...granted.read, ...granted.write]));
}

/** The model-facing shape of a grant (what the Approver is shown). */
export function grantToAdditionalPermissions(grant: PermissionGrant): AdditionalPermissions {
  const permissions: AdditionalPermissions = {};
  if (grant.network) permissions.network = { enabled: true };
  if (grant.read.length > 0 || grant.write.length > 0) {
    permissions.file_system = {
      ...(grant.read.length > 0 ? { read: [...grant.read] } : {}),
      ...(grant.write.length > 0 ? { write: [...grant.write] } : {}),
    };
  }
  return permissions;
}
