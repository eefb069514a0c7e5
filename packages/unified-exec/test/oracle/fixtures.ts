import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TruncationPolicy } from '../../src/index.ts';

/** How a fixture step's command output is described: bytes as segments. */
export type Segment =
  | { text: string }
  | { hex: string }
  | { repeat: string; count: number }
  | { seq: [number, number] }
  | { lines: [string, string, number, number] };

export interface StepInput {
  kind: 'output' | 'error' | 'manager';
  bytes?: Segment[];
  exit_code?: number;
  running?: boolean;
}

export interface FixtureStep {
  call: 'exec_command' | 'write_stdin';
  arguments?: Record<string, unknown>;
  raw_arguments: string;
  input: StepInput;
  output: string;
}

export interface Fixture {
  name: string;
  turn_policy: TruncationPolicy;
  parse_options: Record<string, unknown>;
  steps: FixtureStep[];
}

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');

/** Every recorded scenario fixture (not the tool specs). */
export function loadScenarioFixtures(): Fixture[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.json') && file !== 'tool-specs.json')
    .sort()
    .map((file) => JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as Fixture);
}

/** The recorded tool declarations, per variant. */
export function loadToolSpecs(): Record<string, Array<{ name: string }>> {
  return JSON.parse(readFileSync(path.join(dir, 'tool-specs.json'), 'utf8')).variants;
}

const encoder = new TextEncoder();

/** The bytes a step's command printed. */
export function expandSegments(segments: Segment[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const segment of segments) {
    if ('text' in segment) parts.push(encoder.encode(segment.text));
    else if ('hex' in segment) parts.push(Uint8Array.from(Buffer.from(segment.hex, 'hex')));
    else if ('repeat' in segment) parts.push(encoder.encode(segment.repeat.repeat(segment.count)));
    else if ('seq' in segment) {
      const [from, to] = segment.seq;
      const lines: string[] = [];
      for (let n = from; n <= to; n++) lines.push(`${n}\n`);
      parts.push(encoder.encode(lines.join('')));
    } else {
      const [prefix, suffix, from, to] = segment.lines;
      const lines: string[] = [];
      for (let n = from; n <= to; n++) lines.push(`${prefix}${n}${suffix}\n`);
      parts.push(encoder.encode(lines.join('')));
    }
  }
  return Buffer.concat(parts);
}

/** Replaces the chunk id, wall time and session id, as the oracle's `normalizeOutput`. */
export function normalizeOutput(text: string): string {
  return text
    .replace(/^Chunk ID: [0-9a-f]+$/m, 'Chunk ID: <CHUNK>')
    .replace(/^Wall time: -?\d+(\.\d+)? seconds$/m, 'Wall time: <WALL> seconds')
    .replace(/^Process running with session ID -?\d+$/m, 'Process running with session ID <SID>');
}
