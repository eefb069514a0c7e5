/** A shell whose state can be captured and restored: POSIX-family shells only, as the original. */
export type SnapshotShell = 'bash' | 'zsh' | 'sh';

/** Every supported shell name, in the order the original lists them. */
export const SNAPSHOT_SHELLS: readonly SnapshotShell[] = ['bash', 'zsh', 'sh'];

/** The `ShellInfo.name` as a supported shell, or undefined (`fish`, `powershell`, `cmd`, …). */
export function toSnapshotShell(name: string): SnapshotShell | undefined {
  return (SNAPSHOT_SHELLS as readonly string[]).includes(name) ? (name as SnapshotShell) : undefined;
}

/**
 * The flag that replaces `-lc` when the snapshot is restored: no startup file may run again, or it
 * could re-add variables the snapshot filtered (bash `-p` skips BASH_ENV and imported functions,
 * zsh `-f` skips every rc file, and a non-interactive `sh -c` reads none).
 */
export const RESTORE_FLAG: Readonly<Record<SnapshotShell, string>> = Object.freeze({
  bash: '-pc',
  zsh: '-fc',
  sh: '-c',
});

/**
 * First line of the restore script: undo the restore flag's side effect so the command sees the
 * shell's usual options (`privileged` off in bash, `RCS` on in zsh).
 */
export const RESTORE_STARTUP: Readonly<Record<SnapshotShell, string>> = Object.freeze({
  bash: 'set +o privileged\n',
  zsh: 'setopt RCS\n',
  sh: '',
});
