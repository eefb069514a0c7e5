import { describe, expect, test } from 'vitest';
import { generateChunkId } from './chunk-id.ts';
import {
  execCommandStructuredResult,
  formatExecCommandToolOutput,
  formatWallTimeSeconds,
  modelOutputPolicy,
} from './exec-output.ts';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('formatExecCommandToolOutput', () => {
  test('the concrete example of spec §4.7', () => {
    expect(
      formatExecCommandToolOutput({
        chunkId: '3fa9c1',
        wallTimeSeconds: 0.0123,
        exitCode: 0,
        originalTokenCount: 2,
        rawOutput: bytes('hi\n'),
      }),
    ).toBe(
      'Chunk ID: 3fa9c1\nWall time: 0.0123 seconds\nProcess exited with code 0\nOriginal token count: 2\nOutput:\nhi\n',
    );
  });

  test('a running process shows its session id and no exit code; empty chunk id is omitted', () => {
    expect(
      formatExecCommandToolOutput({
        wallTimeSeconds: 1,
        processId: 1000,
        originalTokenCount: 0,
        rawOutput: bytes(''),
      }),
    ).toBe(
      'Wall time: 1.0000 seconds\nProcess running with session ID 1000\nOriginal token count: 0\nOutput:\n',
    );
  });

  test('the smaller of max_output_tokens and the turn policy wins', () => {
    expect(modelOutputPolicy({ wallTimeSeconds: 0, rawOutput: bytes(''), maxOutputTokens: 70_000 })).toEqual({
      kind: 'tokens',
      limit: 10_000,
    });
    expect(modelOutputPolicy({ wallTimeSeconds: 0, rawOutput: bytes(''), maxOutputTokens: 5 })).toEqual({
      kind: 'tokens',
      limit: 5,
    });
    expect(
      modelOutputPolicy({
        wallTimeSeconds: 0,
        rawOutput: bytes(''),
        turnPolicy: { kind: 'bytes', limit: 10_000 },
      }),
    ).toEqual({ kind: 'bytes', limit: 10_000 });
  });

  test('an omission marker is added when the collected text lacks it', () => {
    const out = formatExecCommandToolOutput({
      wallTimeSeconds: 0,
      originalTokenCount: 30,
      rawOutput: bytes('tail only'),
      omittedBytes: 100,
    });
    expect(out.endsWith('Output:\n... 100 bytes omitted ...\ntail only')).toBe(true);
  });

  test('the whole response fits the serialisation budget of the turn policy', () => {
    const out = formatExecCommandToolOutput({
      chunkId: 'abcdef',
      wallTimeSeconds: 0,
      exitCode: 0,
      originalTokenCount: 25_000,
      rawOutput: bytes('x'.repeat(100_000)),
      maxOutputTokens: 1_000_000,
      turnPolicy: { kind: 'tokens', limit: 100 },
    });
    expect(new TextEncoder().encode(out).length).toBeLessThanOrEqual(480);
    expect(out).toContain('tokens truncated');
  });
});

describe('structured result', () => {
  test('field order and optional fields as the original JSON', () => {
    const result = execCommandStructuredResult({
      chunkId: 'abc123',
      wallTimeSeconds: 0.5,
      exitCode: 3,
      originalTokenCount: 1,
      rawOutput: bytes('hey'),
    });
    expect(JSON.stringify(result)).toBe(
      '{"chunk_id":"abc123","wall_time_seconds":0.5,"exit_code":3,"original_token_count":1,"output":"hey"}',
    );
    const running = execCommandStructuredResult({
      wallTimeSeconds: 1,
      processId: 1001,
      rawOutput: bytes(''),
    });
    expect(JSON.stringify(running)).toBe('{"wall_time_seconds":1,"session_id":1001,"output":""}');
  });

  test('output is truncated only when max_output_tokens was given', () => {
    const long = bytes('y'.repeat(100));
    expect(execCommandStructuredResult({ wallTimeSeconds: 0, rawOutput: long }).output).toBe('y'.repeat(100));
    expect(
      execCommandStructuredResult({ wallTimeSeconds: 0, rawOutput: long, maxOutputTokens: 5 }).output,
    ).toContain('tokens truncated');
  });
});

describe('wall time and chunk ids', () => {
  test('four decimals, exact ties to even like Rust', () => {
    expect(formatWallTimeSeconds(0.0123)).toBe('0.0123');
    expect(formatWallTimeSeconds(0)).toBe('0.0000');
    expect(formatWallTimeSeconds(2.5)).toBe('2.5000');
    expect(formatWallTimeSeconds(0.03125)).toBe('0.0312'); // exact tie, even digit kept
    expect(formatWallTimeSeconds(0.09375)).toBe('0.0938'); // exact tie, rounds to even
    expect(formatWallTimeSeconds(1.00005)).toBe('1.0001'); // not a tie in binary: above half
  });

  test('six lowercase hex digits', () => {
    expect(generateChunkId()).toMatch(/^[0-9a-f]{6}$/);
    expect(generateChunkId(() => Uint8Array.from([0, 1, 10, 15, 16, 255]))).toBe('01af0f');
  });
});
