import { formatRustFloat, rustDebugString } from './rust-format.ts';

/**
 * A JSON argument error, worded and positioned as `serde_json` reports it
 * (`... at line L column C`, columns counted in UTF-8 bytes).
 */
export class JsonArgsError extends Error {
  override name = 'JsonArgsError';
  constructor(
    readonly reason: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(`${reason} at line ${line} column ${column}`);
  }
}

/** A JSON number as serde_json classifies it. */
export type JsonNumber =
  | { readonly kind: 'u64' | 'i64'; readonly value: bigint }
  | { readonly kind: 'f64'; readonly value: number };

/** serde_json's default nesting limit. */
const MAX_DEPTH = 128;
const U64_MAX = 2n ** 64n - 1n;
const I64_MIN = -(2n ** 63n);
const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * A pull reader over the UTF-8 bytes of a JSON text that mirrors serde_json's deserializer:
 * values are read only as far as the visitor asks, errors carry serde_json's messages and
 * positions. `fail` positions an error at the current index, `failPeek` one past it.
 */
export class JsonReader {
  readonly bytes: Uint8Array;
  index = 0;
  #remainingDepth = MAX_DEPTH;

  constructor(text: string) {
    this.bytes = encoder.encode(text);
  }

  /** Skips whitespace and returns the next byte without consuming it. */
  peek(): number | undefined {
    while (this.index < this.bytes.length && WHITESPACE.has(this.bytes[this.index] as number)) this.index++;
    return this.bytes[this.index];
  }

  /** An error positioned after the bytes consumed so far. */
  fail(reason: string): never {
    throw this.errorAt(this.index, reason);
  }

  /** An error positioned at the peeked byte (serde_json's `peek_error`). */
  failPeek(reason: string): never {
    throw this.errorAt(Math.min(this.index + 1, this.bytes.length), reason);
  }

  errorAt(index: number, reason: string): JsonArgsError {
    let line = 1;
    let lineStart = 0;
    for (let i = 0; i < index; i++) {
      if (this.bytes[i] === 0x0a) {
        line++;
        lineStart = i + 1;
      }
    }
    return new JsonArgsError(reason, line, index - lineStart);
  }

  /** Reads the literal `word` whose first byte was peeked. */
  ident(word: string): void {
    this.index++;
    for (let k = 1; k < word.length; k++) {
      const byte = this.bytes[this.index];
      if (byte === undefined) this.fail('EOF while parsing a value');
      this.index++;
      if (byte !== word.charCodeAt(k)) this.fail('expected ident');
    }
  }

  /** Reads a string whose opening quote was peeked. */
  string(): string {
    this.index++;
    const parts: Uint8Array[] = [];
    let start = this.index;
    for (;;) {
      const byte = this.bytes[this.index];
      if (byte === undefined) this.fail('EOF while parsing a string');
      if (byte === 0x22) {
        parts.push(this.bytes.subarray(start, this.index));
        this.index++;
        return parts.map((part) => decoder.decode(part)).join('');
      }
      if (byte < 0x20) this.fail('control character (\\u0000-\\u001F) found while parsing a string');
      if (byte !== 0x5c) {
        this.index++;
        continue;
      }
      parts.push(this.bytes.subarray(start, this.index));
      this.index++;
      parts.push(encoder.encode(this.#escape()));
      start = this.index;
    }
  }

  #escape(): string {
    const byte = this.bytes[this.index];
    if (byte === undefined) this.fail('EOF while parsing a string');
    this.index++;
    const simple: Record<number, string> = {
      34: '"',
      92: '\\',
      47: '/',
      98: '\b',
      102: '\f',
      110: '\n',
      114: '\r',
      116: '\t',
    };
    const mapped = simple[byte];
    if (mapped !== undefined) return mapped;
    if (byte !== 0x75) this.fail('invalid escape');
    const unit = this.#hex4();
    if (unit >= 0xdc00 && unit <= 0xdfff) this.fail('lone leading surrogate in hex escape');
    if (unit < 0xd800 || unit > 0xdbff) return String.fromCharCode(unit);
    for (const expected of [0x5c, 0x75]) {
      const next = this.bytes[this.index];
      if (next === undefined) this.fail('EOF while parsing a string');
      this.index++;
      if (next !== expected) this.fail('unexpected end of hex escape');
    }
    const low = this.#hex4();
    if (low < 0xdc00 || low > 0xdfff) this.fail('lone leading surrogate in hex escape');
    return String.fromCharCode(unit, low);
  }

  #hex4(): number {
    if (this.index + 4 > this.bytes.length) {
      this.index = this.bytes.length;
      this.fail('EOF while parsing a string');
    }
    const text = decoder.decode(this.bytes.subarray(this.index, this.index + 4));
    this.index += 4;
    if (!/^[0-9a-fA-F]{4}$/.test(text)) this.fail('invalid escape');
    return Number.parseInt(text, 16);
  }

  /** Reads a number whose first byte (`-` or a digit) was peeked. */
  number(): JsonNumber {
    const start = this.index;
    const negative = this.bytes[this.index] === 0x2d;
    if (negative) this.index++;
    const first = this.bytes[this.index];
    if (first === undefined) this.fail('EOF while parsing a value');
    if (!isDigit(first)) this.failPeek('invalid number');
    this.index++;
    if (first === 0x30 && isDigit(this.bytes[this.index])) this.failPeek('invalid number');
    while (isDigit(this.bytes[this.index])) this.index++;
    let float = false;
    if (this.bytes[this.index] === 0x2e) {
      float = true;
      this.index++;
      if (!isDigit(this.bytes[this.index])) this.failPeek('invalid number');
      while (isDigit(this.bytes[this.index])) this.index++;
    }
    const e = this.bytes[this.index];
    if (e === 0x65 || e === 0x45) {
      float = true;
      this.index++;
      const sign = this.bytes[this.index];
      if (sign === 0x2b || sign === 0x2d) this.index++;
      if (!isDigit(this.bytes[this.index])) this.failPeek('invalid number');
      while (isDigit(this.bytes[this.index])) this.index++;
    }
    const text = decoder.decode(this.bytes.subarray(start, this.index));
    if (!float) {
      const value = BigInt(text);
      // serde_json reads `-0` as a float, and integers beyond 64 bits as floats.
      if (!negative && value <= U64_MAX) return { kind: 'u64', value };
      if (negative && value !== 0n && value >= I64_MIN) return { kind: 'i64', value };
    }
    const value = Number(text);
    if (!Number.isFinite(value)) this.fail('number out of range');
    return { kind: 'f64', value };
  }

  /** Skips one value of any shape, checking its syntax (serde's `IgnoredAny`). */
  skipValue(): void {
    const byte = this.peek();
    if (byte === undefined) this.failPeek('EOF while parsing a value');
    if (byte === 0x22) this.string();
    else if (byte === 0x2d || isDigit(byte)) this.#skipNumber();
    else if (byte === 0x74) this.ident('true');
    else if (byte === 0x66) this.ident('false');
    else if (byte === 0x6e) this.ident('null');
    else if (byte === 0x5b) this.array(() => this.skipValue());
    else if (byte === 0x7b) {
      this.object(() => {
        this.colon();
        this.skipValue();
      });
    } else this.failPeek('expected value');
  }

  #skipNumber(): void {
    try {
      this.number();
    } catch (error) {
      // Ignored numbers are never converted, so an infinite one is not an error.
      if (!(error instanceof JsonArgsError && error.reason === 'number out of range')) throw error;
    }
  }

  /** Reads an array whose `[` was peeked, calling `element` for each item. */
  array(element: () => void): void {
    this.#enter();
    this.index++;
    let first = true;
    for (;;) {
      const byte = this.peek();
      if (byte === undefined) this.failPeek('EOF while parsing a list');
      if (byte === 0x5d) {
        this.index++;
        this.#remainingDepth++;
        return;
      }
      if (!first) {
        if (byte !== 0x2c) this.failPeek('expected `,` or `]`');
        this.index++;
      }
      first = false;
      element();
    }
  }

  /** Reads an object whose `{` was peeked, calling `entry(key)` positioned before each value. */
  object(entry: (key: string) => void): void {
    this.#enter();
    this.index++;
    let first = true;
    for (;;) {
      let byte = this.peek();
      if (byte === 0x7d) {
        this.index++;
        this.#remainingDepth++;
        return;
      }
      if (byte === undefined) this.failPeek('EOF while parsing an object');
      if (!first) {
        if (byte !== 0x2c) this.failPeek('expected `,` or `}`');
        this.index++;
        byte = this.peek();
        if (byte === 0x7d) this.failPeek('trailing comma');
      }
      first = false;
      if (byte === undefined) this.failPeek('EOF while parsing a value');
      if (byte !== 0x22) this.failPeek('key must be a string');
      const key = this.string();
      entry(key);
    }
  }

  #enter(): void {
    this.#remainingDepth--;
    if (this.#remainingDepth === 0) this.failPeek('recursion limit exceeded');
  }

  /** Consumes the `:` between a key and its value. */
  colon(): void {
    const byte = this.peek();
    if (byte === undefined) this.failPeek('EOF while parsing an object');
    if (byte !== 0x3a) this.failPeek('expected `:`');
    this.index++;
  }

  /**
   * Fails with serde_json's "invalid type" error for the value at the cursor (its
   * `peek_invalid_type`): scalars are read first and the error sits after them; sequences and
   * maps are described without being read and the error sits just before them.
   */
  invalidType(expected: string): never {
    const byte = this.peek();
    if (byte === 0x5b) this.fail(`invalid type: sequence, expected ${expected}`);
    if (byte === 0x7b) this.fail(`invalid type: map, expected ${expected}`);
    let unexpected: string;
    const literal = byte === 0x6e ? 'null' : byte === 0x74 ? 'true' : byte === 0x66 ? 'false' : undefined;
    if (literal !== undefined) {
      this.ident(literal);
      unexpected = literal === 'null' ? 'null' : `boolean \`${literal}\``;
    } else if (byte === 0x22) unexpected = `string ${rustDebugString(this.string())}`;
    else if (byte === 0x2d || isDigit(byte)) {
      const number = this.number();
      // Codex builds serde_json with arbitrary_precision: non-integers are only "number" here.
      unexpected = number.kind === 'f64' ? 'number' : `integer \`${number.value}\``;
    } else if (byte === undefined) return this.failPeek('EOF while parsing a value');
    else return this.failPeek('expected value');
    return this.fail(`invalid type: ${unexpected}, expected ${expected}`);
  }

  /** Describes a number read for an integer field, for an "invalid type" error. */
  static describeFloat(value: number): string {
    return `floating point \`${formatRustFloat(value)}\``;
  }
}

function isDigit(byte: number | undefined): byte is number {
  return byte !== undefined && byte >= 0x30 && byte <= 0x39;
}
