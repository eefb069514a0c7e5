import { readFile } from 'node:fs/promises';
import { parse, TomlError } from 'smol-toml';
import type { TomlTable } from './toml-serialize.ts';

/** How a parse error is told: the user/system form (`path:line:col: msg`) or the project form. */
export type TomlErrorStyle = 'location' | 'project';

/** A TOML file that could not be read or parsed; `message` is the original's text for it. */
export class ConfigFileError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ConfigFileError';
  }
}

/** The first line of smol-toml's message, without its `Invalid TOML document: ` prefix. */
function shortMessage(error: TomlError): string {
  const first = error.message.split('\n', 1)[0] ?? error.message;
  return first.replace(/^Invalid TOML document: /, '');
}

/** toml-rs's report: the position, the offending line and a caret under the column. */
function projectReport(path: string, text: string, error: TomlError): string {
  const line = error.line;
  const column = error.column;
  const gutter = ' '.repeat(String(line).length);
  const source = text.split('\n')[line - 1] ?? '';
  return [
    `Error parsing project config file ${path}: TOML parse error at line ${line}, column ${column}`,
    `${gutter} |`,
    `${line} | ${source}`,
    `${gutter} | ${' '.repeat(Math.max(0, column - 1))}^`,
    `${shortMessage(error)}`,
    '',
  ].join('\n');
}

/**
 * Reads and parses one config file. A missing file is `undefined` (the caller treats it as an
 * empty layer); any other failure is a {@link ConfigFileError} naming the file.
 */
export async function readTomlFile(path: string, style: TomlErrorStyle): Promise<TomlTable | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new ConfigFileError(`failed to read ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    return parse(text, { integersAsBigInt: true }) as TomlTable;
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    const message =
      style === 'project'
        ? projectReport(path, text, error)
        : `${path}:${error.line}:${error.column}: ${shortMessage(error)}`;
    throw new ConfigFileError(message, { cause: error });
  }
}
