import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import {
  holdPlaceholders,
  isPlaceholder,
  placeholderGeneration,
  placeholderGenerationCount,
  placeholderRemovals,
} from './placeholders.ts';

const base = mkdtempSync(join(tmpdir(), 'execd-placeholders-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('placeholders', () => {
  test('the last release removes the folder; every change moves the generation on', async () => {
    const path = join(base, '.codex');
    mkdirSync(path);
    const seen = [placeholderGeneration(path)];
    const releaseA = holdPlaceholders([path]);
    seen.push(placeholderGeneration(path));
    const releaseB = holdPlaceholders([path]);
    expect(placeholderGeneration(path)).toBe(seen[1]); // a second holder changes nothing
    await releaseB();
    expect(isPlaceholder(path)).toBe(true);
    const releasing = releaseA();
    seen.push(placeholderGeneration(path));
    expect(isPlaceholder(path)).toBe(true); // being removed still counts
    await releasing;
    await placeholderRemovals([path]);
    seen.push(placeholderGeneration(path));
    expect(isPlaceholder(path)).toBe(false);
    expect(new Set(seen).size).toBe(4);
    expect(() => rmSync(path)).toThrow(); // removed
  });

  test('a long-lived process keeps a bounded record, and a drop reads as a change', async () => {
    const held = join(base, 'held', '.git');
    mkdirSync(held, { recursive: true });
    const releaseHeld = holdPlaceholders([held]);
    const watched = join(base, 'watched', '.agents');
    const before = placeholderGeneration(watched);
    // Thousands of workspaces come and go (the paths do not exist: the removals fail harmlessly).
    for (let i = 0; i < 5_000; i++) await holdPlaceholders([join(base, `ws-${i}`, '.codex')])();
    expect(placeholderGenerationCount()).toBeLessThanOrEqual(4097);
    // `watched` never changed, but its record may have been dropped meanwhile: the planner looks again.
    expect(placeholderGeneration(watched)).not.toBe(before);
    // A placeholder in use is never forgotten.
    expect(isPlaceholder(held)).toBe(true);
    const heldGeneration = placeholderGeneration(held);
    await releaseHeld();
    expect(placeholderGeneration(held)).toBeGreaterThan(heldGeneration);
  });
});
