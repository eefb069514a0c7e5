import { describe, expect, test } from 'vitest';
import { Utf8DeltaSplitter } from './utf8-stream.ts';

const b = (...values: number[]): Uint8Array => Uint8Array.from(values);
const text = (value: string): Uint8Array => new TextEncoder().encode(value);
const decode = (chunks: Uint8Array[]): string[] => chunks.map((chunk) => new TextDecoder().decode(chunk));

// Ports of the original's async_watcher tests on UTF-8 boundaries (spec §8.9).
describe('Utf8DeltaSplitter', () => {
  test('streaming_output_preserves_multibyte_characters_across_chunks', () => {
    const splitter = new Utf8DeltaSplitter();
    expect(splitter.push(b(0xc3))).toEqual([]);
    expect(splitter.pendingBytes).toBe(1);
    expect(decode(splitter.push(b(0xa9)))).toEqual(['é']);
    expect(splitter.finish()).toEqual([]);
  });

  test('a trailing incomplete character is flushed as the final delta at close', () => {
    const splitter = new Utf8DeltaSplitter();
    expect(decode(splitter.push(text('HELLO-UEXEC\u00e9').subarray(0)))).toEqual(['HELLO-UEXECé']);
    expect(splitter.push(b(0xc3))).toEqual([]);
    expect(splitter.finish()).toEqual([b(0xc3)]);
  });

  test('utf8_boundary_preserves_complete_characters', () => {
    const splitter = new Utf8DeltaSplitter(3);
    expect(decode(splitter.push(text('ééé')))).toEqual(['é', 'é', 'é']);
    const ascii = new Utf8DeltaSplitter(5);
    expect(decode(ascii.push(text('hello word!')))).toEqual(['hello', ' word', '!']);
  });

  test('utf8_boundary_batches_malformed_output', () => {
    const splitter = new Utf8DeltaSplitter(128);
    const deltas = splitter.push(new Uint8Array(1024).fill(0xff));
    expect(deltas).toHaveLength(8);
    expect(deltas.every((delta) => delta.length === 128)).toBe(true);
  });

  test('valid bytes before and after malformed bytes are separate deltas', () => {
    const splitter = new Utf8DeltaSplitter(8192);
    const input = new Uint8Array(4096 * 2 + 1).fill(0x61);
    input[4096] = 0xff;
    input.fill(0x62, 4097);
    const deltas = splitter.push(input);
    expect(deltas.map((delta) => delta.length)).toEqual([4096, 1, 4096]);
    expect(deltas[1]).toEqual(b(0xff));
  });

  test('makes progress on a malformed lead followed by text', () => {
    const splitter = new Utf8DeltaSplitter(2);
    expect(splitter.push(b(0xff, 0x61, 0x62))).toEqual([b(0xff), b(0x61, 0x62)]);
  });

  test('bounds deltas to maxBytes and reassembles to the input', () => {
    const splitter = new Utf8DeltaSplitter(8);
    const input = text('añ€😀'.repeat(50));
    const deltas: Uint8Array[] = [];
    for (let at = 0; at < input.length; at += 5) deltas.push(...splitter.push(input.subarray(at, at + 5)));
    deltas.push(...splitter.finish());
    expect(deltas.every((delta) => delta.length <= 8)).toBe(true);
    expect(decode(deltas).join('')).toBe('añ€😀'.repeat(50));
  });

  test('an invalid continuation inside a sequence is malformed, not held back', () => {
    const splitter = new Utf8DeltaSplitter();
    expect(splitter.push(b(0xe2, 0x28, 0xa1))).toEqual([b(0xe2), b(0x28), b(0xa1)]);
    expect(splitter.pendingBytes).toBe(0);
  });
});
