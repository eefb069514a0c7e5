// Serializes a parsed TOML table the way the original's `toml::to_string` (toml-rs) does, so a
// layer's `toml` text reads the same from execd as from the original: `key = value` lines first,
// then one `[section]` per table that has values of its own (or none at all), tables that only hold
// tables stay implicit, arrays of tables become `[[section]]`, and sections are separated by a blank
// line. The client parses the text again, so only the value matters; the layout is a courtesy.
import { TomlDate } from 'smol-toml';

/** A TOML table as smol-toml parses it (integers as bigint, floats as number). */
export type TomlTable = { [key: string]: TomlValue };
/** Any TOML value. */
export type TomlValue = string | number | bigint | boolean | Date | TomlValue[] | TomlTable;

/** True for a table (not an array, not a date). */
export function isTomlTable(value: unknown): value is TomlTable {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

function isArrayOfTables(value: TomlValue): value is TomlTable[] {
  return Array.isArray(value) && value.length > 0 && value.every(isTomlTable);
}

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

function formatKey(key: string): string {
  return BARE_KEY.test(key) ? key : basicString(key);
}

const ESCAPES: Readonly<Record<string, string>> = {
  '\b': '\\b',
  '\t': '\\t',
  '\n': '\\n',
  '\f': '\\f',
  '\r': '\\r',
  '"': '\\"',
  '\\': '\\\\',
};

function escapeChar(char: string): string {
  return ESCAPES[char] ?? `\\u${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
}

function basicString(value: string): string {
  return `"${value.replace(/[\u0000-\u001f"\\\u007f]/g, escapeChar)}"`;
}

/**
 * toml-rs's choice: a string with a backslash and nothing that needs escaping is written literal
 * (`'C:\dir'`); one with a newline is multi-line; anything else is a basic string.
 */
function formatString(value: string): string {
  const needsEscape = /[\u0000-\u0008\u000b-\u001f\u007f]/.test(value);
  const literalOk = !needsEscape && !value.includes("'''") && !value.endsWith("'");
  if (value.includes('\\') && literalOk) {
    if (value.includes('\n')) return `'''\n${value}'''`;
    return value.includes("'") ? `'''${value}'''` : `'${value}'`;
  }
  if (value.includes('\n') && !needsEscape) {
    return `"""\n${value.replace(/\\/g, '\\\\').replace(/"""/g, '""\\"').replace(/\t/g, '\\t')}"""`;
  }
  return basicString(value);
}

function formatFloat(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  if (Number.isInteger(value) && Math.abs(value) < 1e16) return `${value}.0`;
  return String(value).replace('e+', 'e');
}

/** One value on the right of `=` (tables inline, as inside arrays). */
function formatInline(value: TomlValue): string {
  if (typeof value === 'string') return formatString(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return formatFloat(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (value instanceof TomlDate) return value.toISOString();
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return `[${value.map(formatInline).join(', ')}]`;
  const entries = Object.keys(value).map(
    (key) => `${formatKey(key)} = ${formatInline(value[key] as TomlValue)}`,
  );
  return entries.length === 0 ? '{}' : `{ ${entries.join(', ')} }`;
}

function emitTable(
  table: TomlTable,
  path: readonly string[],
  header: string | undefined,
  out: string[],
): void {
  const keys = Object.keys(table);
  const isSection = (value: TomlValue): boolean => isTomlTable(value) || isArrayOfTables(value);
  const simple = keys.filter((key) => !isSection(table[key] as TomlValue));
  const explicit =
    header !== undefined && (simple.length > 0 || keys.length === 0 || header.startsWith('[['));
  if (explicit) {
    if (out.length > 0) out.push('');
    out.push(header);
  }
  for (const key of simple) out.push(`${formatKey(key)} = ${formatInline(table[key] as TomlValue)}`);
  for (const key of keys) {
    const value = table[key] as TomlValue;
    const childPath = [...path, formatKey(key)];
    if (isTomlTable(value)) emitTable(value, childPath, `[${childPath.join('.')}]`, out);
    else if (isArrayOfTables(value)) {
      for (const item of value) emitTable(item, childPath, `[[${childPath.join('.')}]]`, out);
    }
  }
}

/** The TOML text of `table`, laid out as toml-rs lays it out (ends with a newline unless empty). */
export function stringifyToml(table: TomlTable): string {
  const lines: string[] = [];
  emitTable(table, [], undefined, lines);
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}
