import { JsonReader } from './json-reader.ts';

/** Reads one field value; `undefined` means absent (`null` for an `Option`). */
export type FieldReader = (reader: JsonReader) => unknown;

const NULL = 0x6e;
const QUOTE = 0x22;
const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;

/** serde's rendering of allowed names: `` `a` ``, `` `a` or `b` ``, `` one of `a`, `b`, `c` ``. */
function oneOf(names: readonly string[]): string {
  const quoted = names.map((name) => `\`${name}\``);
  if (quoted.length === 1) return quoted[0] as string;
  if (quoted.length === 2) return `${quoted[0]} or ${quoted[1]}`;
  return `one of ${quoted.join(', ')}`;
}

function optional(read: FieldReader): FieldReader {
  return (reader) => {
    if (reader.peek() === NULL) {
      reader.ident('null');
      return undefined;
    }
    return read(reader);
  };
}

/** `String` (`nullable`: `Option<String>`). */
export function stringField(nullable: boolean): FieldReader {
  const read: FieldReader = (reader) =>
    reader.peek() === QUOTE ? reader.string() : reader.invalidType('a string');
  return nullable ? optional(read) : read;
}

/** `bool` (`nullable`: `Option<bool>`). */
export function boolField(nullable: boolean): FieldReader {
  const read: FieldReader = (reader) => {
    const byte = reader.peek();
    if (byte === 0x74 || byte === 0x66) {
      reader.ident(byte === 0x74 ? 'true' : 'false');
      return byte === 0x74;
    }
    return reader.invalidType('a boolean');
  };
  return nullable ? optional(read) : read;
}

const INTEGER_RANGES: Record<'u64' | 'usize' | 'i32', readonly [bigint, bigint]> = {
  u64: [0n, 2n ** 64n - 1n],
  usize: [0n, 2n ** 64n - 1n],
  i32: [-(2n ** 31n), 2n ** 31n - 1n],
};

/** An integer of Rust type `u64`, `usize` or `i32` (`nullable`: wrapped in `Option`). */
export function integerField(type: 'u64' | 'usize' | 'i32', nullable: boolean): FieldReader {
  const read: FieldReader = (reader) => {
    const byte = reader.peek();
    if (byte !== 0x2d && (byte === undefined || byte < 0x30 || byte > 0x39)) return reader.invalidType(type);
    const number = reader.number();
    if (number.kind === 'f64') {
      return reader.fail(`invalid type: ${JsonReader.describeFloat(number.value)}, expected ${type}`);
    }
    const [min, max] = INTEGER_RANGES[type];
    if (number.value < min || number.value > max) {
      return reader.fail(`invalid value: integer \`${number.value}\`, expected ${type}`);
    }
    return Number(number.value);
  };
  return nullable ? optional(read) : read;
}

/**
 * A unit-variant enum (`Option<Enum>`): a variant name, or serde_json's `{"variant": null}`
 * form. `declared` is the Rust declaration order used in "unknown variant" errors.
 */
export function enumField(declared: readonly string[]): FieldReader {
  const variant = (reader: JsonReader): string => {
    const name = reader.string();
    if (!declared.includes(name)) reader.fail(`unknown variant \`${name}\`, expected ${oneOf(declared)}`);
    return name;
  };
  return optional((reader) => {
    const byte = reader.peek();
    if (byte === QUOTE) return variant(reader);
    if (byte !== OPEN_BRACE) return reader.failPeek('expected value');
    reader.index++;
    if (reader.peek() !== QUOTE) reader.failPeek('key must be a string');
    const name = variant(reader);
    reader.colon();
    if (reader.peek() !== NULL) reader.invalidType('unit variant');
    reader.ident('null');
    const end = reader.peek();
    if (end === undefined) reader.failPeek('EOF while parsing an object');
    if (end !== 0x7d) reader.failPeek('expected `,` or `}`');
    reader.index++;
    return name;
  });
}

/** `Option<Vec<String>>`. */
export function stringListField(): FieldReader {
  const item = stringField(false);
  return optional((reader) => {
    if (reader.peek() !== OPEN_BRACKET) return reader.invalidType('a sequence');
    const out: unknown[] = [];
    reader.array(() => out.push(item(reader)));
    return out;
  });
}

/**
 * A struct: an object whose known fields are read in document order (unknown ones are skipped),
 * with serde's duplicate-field and missing-field errors.
 */
export function readStruct(
  reader: JsonReader,
  name: string,
  fields: Readonly<Record<string, FieldReader>>,
  required: readonly string[] = [],
): Record<string, unknown> {
  if (reader.peek() !== OPEN_BRACE) reader.invalidType(`struct ${name}`);
  const out: Record<string, unknown> = {};
  const seen = new Set<string>();
  reader.object((key) => {
    const field = Object.hasOwn(fields, key) ? fields[key] : undefined;
    if (field !== undefined && seen.has(key)) reader.fail(`duplicate field \`${key}\``);
    reader.colon();
    if (field === undefined) {
      reader.skipValue();
      return;
    }
    seen.add(key);
    const value = field(reader);
    if (value !== undefined) out[key] = value;
  });
  for (const field of required) if (!seen.has(field)) reader.fail(`missing field \`${field}\``);
  return out;
}

/** `Option<Struct>` nested inside another struct. */
export function structField(name: string, fields: Readonly<Record<string, FieldReader>>): FieldReader {
  return optional((reader) => readStruct(reader, name, fields));
}

/** Reads a whole document as one struct and rejects trailing characters. */
export function readDocument(
  text: string,
  name: string,
  fields: Readonly<Record<string, FieldReader>>,
  required: readonly string[] = [],
): Record<string, unknown> {
  const reader = new JsonReader(text);
  const value = readStruct(reader, name, fields, required);
  if (reader.peek() !== undefined) reader.failPeek('trailing characters');
  return value;
}
