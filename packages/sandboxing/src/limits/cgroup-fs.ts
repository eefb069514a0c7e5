import { accessSync, constants, mkdirSync, readFileSync, writeFileSync } from 'node:fs';

/*
 * Every call here is made synchronously, behind the same Promise-returning functions: cgroup files
 * are the kernel's own state, read and written without I/O or a remote party that could stall
 * them, and a call takes a few microseconds. Through Node's thread pool each took a round trip of
 * ~0.1-0.3 ms on the 2-core VM (a sleeping pool thread to wake, then this one), and creating a
 * command's group took ~13 of them in a row: ~2.7 ms of every sandboxed launch.
 */

/** The errno code of a failed fs call (`ENOENT`, `EACCES`, ...), or `undefined`. */
export function errnoCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A file's text, or `undefined` when it does not exist. */
export async function readOptional(path: string): Promise<string | undefined> {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENODEV') return undefined;
    throw error;
  }
}

/** Writes a cgroup control file (one `write(2)`, as the kernel expects). */
export async function writeControl(path: string, value: string): Promise<void> {
  writeFileSync(path, value, { flag: 'w' });
}

/** `key value` lines (pids.events, memory.events, cpu.stat, memory.oom_control) → numbers; `{}` when missing. */
export async function readFlatKeyed(path: string): Promise<Record<string, number>> {
  const text = await readOptional(path);
  const values: Record<string, number> = {};
  for (const line of (text ?? '').split('\n')) {
    const [key, value] = line.trim().split(/\s+/);
    if (key && value !== undefined && /^\d+$/.test(value)) values[key] = Number(value);
  }
  return values;
}

/** A file holding one number (memory.failcnt, cpuacct.usage); `undefined` when missing. */
export async function readNumber(path: string): Promise<number | undefined> {
  const text = (await readOptional(path))?.trim();
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined;
}

/** The pids listed in cgroup.procs files (deduplicated; missing files count as empty). */
export async function readMembers(procsFiles: readonly string[]): Promise<number[]> {
  const pids = new Set<number>();
  for (const text of await Promise.all(procsFiles.map(readOptional))) {
    for (const line of (text ?? '').split('\n')) {
      if (/^\d+$/.test(line)) pids.add(Number(line));
    }
  }
  return [...pids];
}

/** `mkdir` that accepts an existing directory. */
export async function ensureDirectory(path: string): Promise<void> {
  try {
    mkdirSync(path);
  } catch (error) {
    if (errnoCode(error) !== 'EEXIST') throw error;
  }
}

/** True when `path` exists. */
export async function exists(path: string): Promise<boolean> {
  try {
    accessSync(path, constants.F_OK);
    return true;
  } catch {
    return false;
  }
}

/** `undefined` when this process may write `path`, else the errno code (`EACCES`, `EROFS`, ...). */
export async function writeDenied(path: string): Promise<string | undefined> {
  try {
    accessSync(path, constants.W_OK);
    return undefined;
  } catch (error) {
    return errnoCode(error) ?? 'EACCES';
  }
}
