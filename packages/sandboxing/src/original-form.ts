import { isAbsolute, join } from 'node:path';
import {
  type FileSystemSandboxContext,
  type FileSystemSandboxEntry,
  fileUriToPath,
  pathToFileUri,
  type SandboxContext,
} from '@execd/protocol';
import { PROTECTED_NAMES } from './file-system-plan.ts';

const entry = (path: FileSystemSandboxEntry['path'], access: FileSystemSandboxEntry['access']) => ({
  path,
  access,
});

/**
 * execd's sandbox form rewritten in the original's (`FileSystemSandboxContext`), for an original
 * exec-server, which knows only that one: `read-only` = read everything; `workspace-write` = also
 * write each workspace root and `writableRoots` (explicit paths, so an empty root list stays
 * empty), `/tmp` and the temporary folder unless excluded, with `.git`/`.agents`/`.codex` of each
 * read-only; `danger-full-access` = `disabled`, or an unrestricted file system when the network is
 * limited. `proxied` travels as `restricted` (the request's `enforceManagedNetwork` carries the
 * proxy). `cwd` is the command's working directory (absolute).
 */
export function originalSandboxFor(context: SandboxContext, cwd: string): FileSystemSandboxContext {
  const networkOn =
    context.network !== undefined
      ? context.network === 'full'
      : (context.networkAccess ?? context.profile === 'danger-full-access');
  const network = networkOn ? 'enabled' : 'restricted';
  const base = {
    cwd: pathToFileUri(cwd),
    windowsSandboxLevel: 'disabled',
    useLegacyLandlock: false,
  } as const;
  if (context.mode === 'forbid' || (context.profile === 'danger-full-access' && networkOn))
    return { ...base, permissions: { type: 'disabled' } };
  if (context.profile === 'danger-full-access')
    return { ...base, permissions: { type: 'managed', file_system: { type: 'unrestricted' }, network } };
  const entries: FileSystemSandboxEntry[] = [entry({ type: 'special', value: { kind: 'root' } }, 'read')];
  const workspaceRoots = context.workspaceRoots ?? [pathToFileUri(cwd)];
  if (context.profile === 'workspace-write') {
    const roots = [...workspaceRoots, ...(context.writableRoots ?? [])];
    for (const uri of roots) entries.push(entry({ type: 'path', path: uri }, 'write'));
    if (context.excludeSlashTmp !== true)
      entries.push(entry({ type: 'special', value: { kind: 'slash_tmp' } }, 'write'));
    if (context.excludeTmpdirEnvVar !== true)
      entries.push(entry({ type: 'special', value: { kind: 'tmpdir' } }, 'write'));
    for (const uri of roots) {
      const root = fileUriToPath(uri);
      if (!isAbsolute(root)) continue;
      for (const name of PROTECTED_NAMES) {
        entries.push({
          ...entry({ type: 'path', path: pathToFileUri(join(root, name)) }, 'read'),
          missing_path_behavior: 'skip',
        });
      }
    }
  }
  return {
    ...base,
    ...(workspaceRoots.length > 0 ? { workspaceRoots: [...workspaceRoots] } : {}),
    permissions: { type: 'managed', file_system: { type: 'restricted', entries }, network },
  };
}
