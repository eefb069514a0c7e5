import { basename } from 'node:path';
import { extractApplyPatchHeredoc } from './bash-heredoc.ts';
import { type ParsedPatch, PatchParseError, parsePatch } from './parser.ts';
import { resolvePatchPath } from './verify.ts';

const APPLY_PATCH_COMMANDS = ['apply_patch', 'applypatch'];

/** Text for a bare patch run as a command (no `apply_patch` in front). */
export const IMPLICIT_INVOCATION_MESSAGE =
  'patch detected without explicit call to apply_patch. Rerun as ["apply_patch", "<patch>"]';

/** What a command line turned out to be. */
export type ApplyPatchInvocation =
  /** Not an apply_patch call: run it as a command. */
  | { readonly kind: 'none' }
  /** An apply_patch call whose patch (or form) is wrong; `message` follows `apply_patch verification failed: `. */
  | { readonly kind: 'invalid'; readonly message: string }
  /** A patch to apply in `cwd` (the command's cwd, or the `cd` folder of the heredoc form). */
  | { readonly kind: 'patch'; readonly parsed: ParsedPatch; readonly cwd: string };

function isPatch(text: string): boolean {
  try {
    parsePatch(text);
    return true;
  } catch {
    return false;
  }
}

// `bash|zsh|sh -c|-lc SCRIPT` (and the PowerShell / cmd forms the original also accepts).
function shellScript(argv: readonly string[]): string | undefined {
  const stem = (shell: string): string =>
    basename(shell)
      .replace(/\.[^.]*$/, '')
      .toLowerCase();
  const classify = (shell: string, flag: string): boolean => {
    const name = stem(shell);
    if (['bash', 'zsh', 'sh'].includes(name)) return flag === '-lc' || flag === '-c';
    if (name === 'pwsh' || name === 'powershell') return flag.toLowerCase() === '-command';
    return name === 'cmd' && flag.toLowerCase() === '/c';
  };
  if (argv.length === 3 && classify(argv[0] as string, argv[1] as string)) return argv[2];
  if (
    argv.length === 4 &&
    ['pwsh', 'powershell'].includes(stem(argv[0] as string)) &&
    (argv[1] as string).toLowerCase() === '-noprofile' &&
    classify(argv[0] as string, argv[2] as string)
  ) {
    return argv[3];
  }
  return undefined;
}

function parsed(body: string, cwd: string): ApplyPatchInvocation {
  try {
    // CRLF inside the patch text is read as LF.
    return { kind: 'patch', parsed: parsePatch(body.replaceAll('\r\n', '\n')), cwd };
  } catch (error) {
    if (error instanceof PatchParseError) return { kind: 'invalid', message: error.message };
    throw error;
  }
}

/**
 * Recognises an apply_patch call in a command line (the original's
 * `maybe_parse_apply_patch_verified`, before any file is read): `apply_patch PATCH`, or a shell
 * script that is exactly `apply_patch <<'EOF' … EOF` (also `applypatch`, and after `cd DIR &&`).
 * A bare patch as the command or script is refused rather than run.
 */
export async function parseApplyPatchInvocation(
  argv: readonly string[],
  cwd: string,
): Promise<ApplyPatchInvocation> {
  const script = shellScript(argv);
  if ((argv.length === 1 && isPatch(argv[0] as string)) || (script !== undefined && isPatch(script))) {
    return { kind: 'invalid', message: IMPLICIT_INVOCATION_MESSAGE };
  }
  if (argv.length === 2 && APPLY_PATCH_COMMANDS.includes(argv[0] as string)) {
    return parsed(argv[1] as string, cwd);
  }
  if (script === undefined) return { kind: 'none' };
  const heredoc = await extractApplyPatchHeredoc(script);
  if (heredoc === undefined) return { kind: 'none' };
  const workdir = heredoc.workdir;
  return parsed(heredoc.body, workdir === undefined ? cwd : resolvePatchPath(cwd, workdir));
}
