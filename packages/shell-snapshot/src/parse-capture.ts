import { SNAPSHOT_END_MARKER, SNAPSHOT_MARKER } from './capture-script.ts';
import { MAX_SNAPSHOT_BYTES } from './limits.ts';

/** The raw sections of a capture, before rendering and filtering. */
export interface CaptureSections {
  /** `set +o` output (bash, sh) or `setopt` output (zsh). */
  readonly options: string;
  /** `alias -p` (bash), `alias -L` (zsh) or `alias` (sh) output. */
  readonly aliases: string;
  /** Function definitions as the shell prints them. */
  readonly functions: string;
  /**
   * The exported environment, in `env -0` order. Entries that are not UTF-8, have no `=`, or whose
   * name is not a shell identifier are dropped (no shell could restore them).
   */
  readonly env: ReadonlyMap<string, string>;
}

/** Outcome of `parseCaptureOutput`: the sections, or why the output is unusable. */
export type ParsedCapture =
  | { readonly ok: true; readonly sections: CaptureSections }
  | { readonly ok: false; readonly detail: string };

const VALID_ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NUL = 0;
const MARKER_BYTES = Buffer.from(`\0${SNAPSHOT_MARKER}\0`);
const END_BYTES = Buffer.from(SNAPSHOT_END_MARKER);

/**
 * Parses the stdout of `captureScript(shell)` strictly: the marker must be present, the three
 * state sections must be valid UTF-8, the environment must end with the end marker, and state plus
 * environment must fit in `MAX_SNAPSHOT_BYTES` (counted before any filtering).
 */
export function parseCaptureOutput(bytes: Uint8Array): ParsedCapture {
  const output = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const start = output.indexOf(MARKER_BYTES);
  if (start < 0) return { ok: false, detail: 'missing snapshot marker' };
  let cursor = start + MARKER_BYTES.length;
  const state: string[] = [];
  for (const section of ['options', 'aliases', 'functions']) {
    const end = output.indexOf(NUL, cursor);
    if (end < 0) return { ok: false, detail: `truncated snapshot (no end of ${section})` };
    const text = decodeStrict(output.subarray(cursor, end));
    if (text === undefined) return { ok: false, detail: `snapshot ${section} are not valid UTF-8` };
    state.push(text);
    cursor = end + 1;
  }
  const envStart = cursor;
  const env = new Map<string, string>();
  for (;;) {
    const end = output.indexOf(NUL, cursor);
    if (end < 0) return { ok: false, detail: 'truncated snapshot (no end marker)' };
    const entry = output.subarray(cursor, end);
    cursor = end + 1;
    if (entry.equals(END_BYTES)) break;
    addEnvEntry(env, entry);
  }
  const measured = cursor - 1 - envStart + state.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
  if (measured > MAX_SNAPSHOT_BYTES) {
    return { ok: false, detail: `shell snapshot exceeds ${MAX_SNAPSHOT_BYTES} bytes` };
  }
  const [options = '', aliases = '', functions = ''] = state;
  return { ok: true, sections: { options, aliases, functions, env } };
}

function addEnvEntry(env: Map<string, string>, entry: Uint8Array): void {
  const text = decodeStrict(entry);
  if (text === undefined) return;
  const equals = text.indexOf('=');
  if (equals <= 0) return;
  const name = text.slice(0, equals);
  if (!VALID_ENV_NAME.test(name)) return;
  env.set(name, text.slice(equals + 1));
}

function decodeStrict(bytes: Uint8Array): string | undefined {
  try {
    // A fresh decoder per call: `fatal` decoders keep no state between calls, but this stays obvious.
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
