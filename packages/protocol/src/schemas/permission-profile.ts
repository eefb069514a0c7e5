import * as v from 'valibot';
import { opt, PathUri } from './common.ts';

// The original's (Codex 0.169.0) sandbox wire form: `FileSystemSandboxContext` carrying a
// `PermissionProfile`. Enum tags and field names are snake_case inside the profile and camelCase
// on the context, exactly as the original's serde attributes. Unknown extra fields are dropped
// (serde ignores them); an unknown tag or enum value is an error naming the field.

/**
 * Access of one file-system entry. `deny` beats `write` beats `read` for equally specific
 * entries; `none` is the original's legacy alias of `deny` (decoded to `deny`).
 */
export const FileSystemAccessMode = v.pipe(
  v.picklist(['read', 'write', 'deny', 'none']),
  v.transform((mode) => (mode === 'none' ? 'deny' : mode)),
);
export type FileSystemAccessMode = v.InferOutput<typeof FileSystemAccessMode>;

/** `project_roots` (alias `current_working_directory`): every workspace root, or `subpath` under each. */
const ProjectRootsSpecialPath = v.object({
  kind: v.picklist(['project_roots', 'current_working_directory']),
  /** Relative path under each project root (e.g. `.git`). */
  subpath: opt(v.string()),
});

/**
 * A symbolic path resolved on the executor: `root` (`/`), `minimal` (the platform's
 * defaults needed to run programs), `project_roots` (the context's workspace roots, or its cwd),
 * `tmpdir` (`temporaryDirectories` or `$TMPDIR`), `slash_tmp` (`/tmp`). The original's
 * `unknown {path, subpath}` placeholder is accepted and ignored, as the original does.
 */
export const FileSystemSpecialPath = v.variant('kind', [
  v.object({ kind: v.literal('root') }),
  v.object({ kind: v.literal('minimal') }),
  ProjectRootsSpecialPath,
  v.object({ kind: v.literal('tmpdir') }),
  v.object({ kind: v.literal('slash_tmp') }),
  v.object({ kind: v.literal('unknown'), path: v.string(), subpath: opt(v.string()) }),
]);
export type FileSystemSpecialPath = v.InferOutput<typeof FileSystemSpecialPath>;

/** The target of an entry: an absolute `file://` path, a glob pattern, or a special path. */
export const FileSystemPath = v.variant('type', [
  v.object({ type: v.literal('path'), /** Absolute `file://` URI. */ path: PathUri }),
  v.object({
    type: v.literal('glob_pattern'),
    /** Glob (`*`, `?`, `[...]`, `**`); relative patterns are relative to the context's cwd. */
    pattern: v.string(),
  }),
  v.object({ type: v.literal('special'), value: FileSystemSpecialPath }),
]);
export type FileSystemPath = v.InferOutput<typeof FileSystemPath>;

/** One entry of a restricted file-system policy. */
export const FileSystemSandboxEntry = v.object({
  path: FileSystemPath,
  access: FileSystemAccessMode,
  /** `skip`: ignore the entry when its path does not exist (default: the entry still applies). */
  missing_path_behavior: opt(v.picklist(['skip'])),
});
export type FileSystemSandboxEntry = v.InferOutput<typeof FileSystemSandboxEntry>;

/** File-system permissions of a `managed` profile. */
export const ManagedFileSystemPermissions = v.variant('type', [
  v.object({
    type: v.literal('restricted'),
    entries: v.array(FileSystemSandboxEntry),
    /** How deep a `**` deny glob is expanded when the sandbox is built (at least 1). */
    glob_scan_max_depth: opt(v.pipe(v.number(), v.safeInteger(), v.minValue(1))),
  }),
  v.object({ type: v.literal('unrestricted') }),
]);
export type ManagedFileSystemPermissions = v.InferOutput<typeof ManagedFileSystemPermissions>;

/** `restricted` (no direct network) or `enabled`. */
export const NetworkSandboxPolicy = v.picklist(['restricted', 'enabled']);
export type NetworkSandboxPolicy = v.InferOutput<typeof NetworkSandboxPolicy>;

/**
 * The original's permission profile: `managed` (the executor builds the sandbox), `disabled`
 * (no sandbox), `external` (another layer isolates the file system; only the network applies).
 */
export const PermissionProfile = v.variant('type', [
  v.object({
    type: v.literal('managed'),
    file_system: ManagedFileSystemPermissions,
    network: NetworkSandboxPolicy,
  }),
  v.object({ type: v.literal('disabled') }),
  v.object({ type: v.literal('external'), network: NetworkSandboxPolicy }),
]);
export type PermissionProfile = v.InferOutput<typeof PermissionProfile>;

/** The cwd and workspace roots a permission profile's relative entries are resolved against. */
export const PolicyContext = v.object({
  cwd: opt(PathUri),
  workspaceRoots: opt(v.array(PathUri)),
});

/**
 * The original's `FileSystemSandboxContext`: how `process/start` and `fs/*` requests from Codex
 * carry their sandbox. Windows-only fields are accepted and ignored on unix.
 */
export const FileSystemSandboxContext = v.object({
  permissions: PermissionProfile,
  /** Directory that `project_roots` and relative globs resolve against (default: the process cwd). */
  cwd: opt(PathUri),
  /** Project roots (`project_roots` = each of them); empty or absent = the cwd. */
  workspaceRoots: opt(v.array(PathUri)),
  /** Executor user's home directory (default: the executor's `$HOME`). */
  userHomeDir: opt(PathUri),
  /** What `tmpdir` means (default: the executor's `$TMPDIR`). */
  temporaryDirectories: opt(v.array(PathUri)),
  /** `fs/*` calls: the cwd and roots of the turn (used where `cwd`/`workspaceRoots` are absent). */
  policyContext: opt(PolicyContext),
  windowsSandboxLevel: opt(v.string()),
  windowsSandboxPrivateDesktop: opt(v.boolean()),
  windowsSandboxProxySettingsMode: opt(v.string()),
  /** Linux: the original's legacy Landlock backend instead of bubblewrap (execd always uses bubblewrap). */
  useLegacyLandlock: opt(v.boolean()),
  /**
   * execd extension (original peers ignore it): the network mode as execd's `SandboxContext.network`,
   * overriding `permissions.network`; the server sets `proxied` for `enforceManagedNetwork`.
   */
  network: opt(v.picklist(['full', 'off', 'proxied'])),
});
export type FileSystemSandboxContext = v.InferOutput<typeof FileSystemSandboxContext>;
