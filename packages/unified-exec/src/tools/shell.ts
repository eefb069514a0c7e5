/** The shell families the original knows how to drive. */
export type ShellType = 'bash' | 'zsh' | 'sh' | 'powershell' | 'cmd';

/** A shell binary and its family; derives the argv that runs one command string. */
export class Shell {
  /** Family, which decides the flags. */
  readonly type: ShellType;
  /** Path or name of the binary (argv[0]). */
  readonly path: string;

  constructor(type: ShellType, path: string) {
    this.type = type;
    this.path = path;
  }

  /**
   * The argv that runs `command`: POSIX shells `[path, '-lc'|'-c', command]`; PowerShell
   * `[path, '-NoProfile'?, '-Command', command]` (profile skipped unless login); cmd
   * `[path, '/c', command]`.
   */
  deriveExecArgs(command: string, login: boolean): string[] {
    switch (this.type) {
      case 'bash':
      case 'zsh':
      case 'sh':
        return [this.path, login ? '-lc' : '-c', command];
      case 'powershell':
        return login ? [this.path, '-Command', command] : [this.path, '-NoProfile', '-Command', command];
      case 'cmd':
        return [this.path, '/c', command];
    }
  }

  /**
   * The shell for a path the model (or config) names, by its file name: `bash`, `zsh`, `sh`,
   * `pwsh`/`powershell`, `cmd` (an `.exe` suffix is ignored). Unknown names run as `sh`-like.
   */
  static fromPath(path: string): Shell {
    const name = (path.split(/[\\/]/).pop() ?? path).toLowerCase().replace(/\.exe$/, '');
    switch (name) {
      case 'bash':
      case 'zsh':
      case 'sh':
        return new Shell(name, path);
      case 'pwsh':
      case 'powershell':
        return new Shell('powershell', path);
      case 'cmd':
        return new Shell('cmd', path);
      default:
        return new Shell('sh', path);
    }
  }
}
