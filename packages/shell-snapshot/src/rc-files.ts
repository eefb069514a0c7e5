import { stat } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import type { SnapshotShell } from './shell-kind.ts';

/**
 * The startup files a `shell -lc` capture reads (login files, the interactive rc file the capture
 * script sources, and `BASH_ENV`/`ENV`), for `env` as the capture sees it. Absolute paths only.
 * Files those files source (`/etc/profile.d/*`, plugin managers) are not tracked.
 */
export function startupFiles(shell: SnapshotShell, env: Readonly<Record<string, string>>): string[] {
  const home = env.HOME ?? '';
  const inHome = (dir: string, names: readonly string[]): string[] =>
    isAbsolute(dir) ? names.map((name) => join(dir, name)) : [];
  let files: string[];
  switch (shell) {
    case 'bash':
      files = [
        '/etc/profile',
        '/etc/bash.bashrc',
        ...inHome(home, ['.bash_profile', '.bash_login', '.profile', '.bashrc']),
        env.BASH_ENV ?? '',
      ];
      break;
    case 'zsh':
      files = [
        ...['zshenv', 'zprofile', 'zshrc', 'zlogin'].flatMap((name) => [`/etc/${name}`, `/etc/zsh/${name}`]),
        ...inHome(env.ZDOTDIR || home, ['.zshenv', '.zprofile', '.zshrc', '.zlogin']),
      ];
      break;
    case 'sh':
      files = ['/etc/profile', ...inHome(home, ['.profile']), env.ENV ?? ''];
      break;
  }
  return files.filter((file) => isAbsolute(file));
}

/**
 * A fingerprint of `files` (modification time in ns, size; `-` when missing): part of the cache
 * key, so editing `~/.bashrc` makes the next command capture again instead of reusing stale state.
 */
export async function startupFilesStamp(files: readonly string[]): Promise<string> {
  const stamps = await Promise.all(
    files.map(async (file) => {
      try {
        const info = await stat(file, { bigint: true });
        return `${file}:${info.mtimeNs}:${info.size}`;
      } catch {
        return `${file}:-`;
      }
    }),
  );
  return stamps.join('\n');
}
