import { homedir } from 'node:os';
import { resolve } from 'node:path';
import type { CliOptions } from './cli-args.ts';

/**
 * Why the workspace the options would make writable is refused, or undefined when it is fine.
 * A local workspace-write session without `--cwd` makes the current folder writable; started
 * from `/` or the home folder (as an MCP host or a careless `cd` may do), that is the whole
 * machine or every dotfile. An explicit `--cwd`, read-only, full access or `--remote` (whose
 * folder is the server's) are the person's choice.
 */
export function refusedWorkspace(
  options: Pick<CliOptions, 'cwd' | 'remote' | 'sandbox'>,
  current: string = process.cwd(),
  home: string = homedir(),
): string | undefined {
  if (options.cwd !== undefined || options.remote !== undefined) return undefined;
  if (options.sandbox !== 'workspace-write') return undefined;
  const folder = resolve(current);
  let what: string;
  if (folder === '/') what = 'the root of the file system';
  else if (home !== '' && folder === resolve(home)) what = 'your home folder';
  else return undefined;
  return (
    `refusing to make ${folder} (${what}) writable as the workspace. ` +
    'Pass --cwd DIR to choose the workspace, or --sandbox read-only to only read here.'
  );
}
