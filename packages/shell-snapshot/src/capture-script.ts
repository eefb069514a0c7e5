import type { SnapshotShell } from './shell-kind.ts';

/** Starts the captured state; anything the profile printed before it is discarded. */
export const SNAPSHOT_MARKER = '# Snapshot file';

/** Follows the environment; anything after it (an EXIT trap's output, say) is discarded. */
export const SNAPSHOT_END_MARKER = '# End of snapshot';

// The capture's stdout, after whatever the profile printed:
//
//   NUL "# Snapshot file" NUL  options NUL  aliases NUL  functions NUL  NAME=VALUE NUL …  "# End of snapshot" NUL
//
// NUL cannot occur inside a shell string, so no function body or alias value can forge a section
// boundary. Every command word is written `\word` so an alias from the profile cannot replace it,
// and `${X-}` keeps a profile's `set -u` from aborting the script. The script never calls `unset`,
// `builtin` or `command`, which profiles sometimes shadow with functions.
const EMIT_MARKER = `\\printf '\\000%s\\000' '${SNAPSHOT_MARKER}'`;
const END_SECTION = `\\printf '\\000'`;
const EMIT_ENVIRONMENT = `/usr/bin/env -0\n\\printf '%s\\000' '${SNAPSHOT_END_MARKER}'`;

const BASH_SCRIPT = [
  // A non-interactive bash has already sourced BASH_ENV; otherwise load the interactive rc file.
  `if \\[ -z "\${BASH_ENV-}" ] && \\[ -r "\${HOME-}/.bashrc" ]; then \\. "\${HOME-}/.bashrc"; fi`,
  EMIT_MARKER,
  '\\set +o',
  END_SECTION,
  '\\alias -p || :',
  END_SECTION,
  '\\declare -f || :',
  END_SECTION,
  EMIT_ENVIRONMENT,
].join('\n');

const ZSH_SCRIPT = [
  `if \\[ -r "\${ZDOTDIR:-\${HOME-}}/.zshrc" ]; then \\. "\${ZDOTDIR:-\${HOME-}}/.zshrc"; fi`,
  EMIT_MARKER,
  '\\setopt',
  END_SECTION,
  '\\alias -L || :',
  END_SECTION,
  // Trap functions (TRAPEXIT, TRAPZERR, TRAPDEBUG, TRAPINT, …) and the zshexit hook would install
  // traps in every restored shell: they are never captured.
  `for __execd_fn in \${(ok)functions}; do case $__execd_fn in TRAP*|zshexit) ;; *) \\functions -- "$__execd_fn" ;; esac; done`,
  END_SECTION,
  EMIT_ENVIRONMENT,
].join('\n');

const SH_SCRIPT = [
  `if \\[ -n "\${ENV-}" ] && \\[ -r "\${ENV-}" ]; then \\. "\${ENV-}"; fi`,
  EMIT_MARKER,
  '\\set +o',
  END_SECTION,
  '\\alias || :',
  END_SECTION,
  // dash has no way to print functions; bash or ksh running as sh do.
  'if \\typeset -f >/dev/null 2>&1; then \\typeset -f; elif \\declare -f >/dev/null 2>&1; then \\declare -f; fi',
  END_SECTION,
  EMIT_ENVIRONMENT,
].join('\n');

const SCRIPTS: Readonly<Record<SnapshotShell, string>> = {
  bash: BASH_SCRIPT,
  zsh: ZSH_SCRIPT,
  sh: SH_SCRIPT,
};

/**
 * The script run as `shell -lc <script>` to capture state: it loads the interactive rc file (the
 * login files have already run), then prints the marker, the options, aliases and functions, a
 * NUL, and the exported environment (`env -0`). Parse its stdout with `parseCaptureOutput`.
 */
export function captureScript(shell: SnapshotShell): string {
  return SCRIPTS[shell];
}
