import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A temporary HOME with written startup files; removed on dispose. */
export interface TempHome extends Disposable {
  readonly path: string;
  /** Writes (or rewrites) a file relative to HOME. */
  write(name: string, text: string): void;
  /** Reads how many times the profile ran (`printf x >> "$HOME/captures"`). */
  captures(): string;
  /** Names in HOME, recursively, sorted (to show nothing else was written). */
  listing(): string[];
}

export function tempHome(files: Readonly<Record<string, string>> = {}): TempHome {
  const path = mkdtempSync(join(tmpdir(), 'execd-snapshot-home-'));
  const write = (name: string, text: string): void => writeFileSync(join(path, name), text);
  for (const [name, text] of Object.entries(files)) write(name, text);
  return {
    path,
    write,
    captures() {
      const file = join(path, 'captures');
      return existsSync(file) ? readFileSync(file, 'utf8') : '';
    },
    listing() {
      return (readdirSync(path, { recursive: true }) as string[]).sort();
    },
    [Symbol.dispose]() {
      rmSync(path, { recursive: true, force: true });
    },
  };
}
