import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { applyPatchFreeformToolSpec } from '../src/index.ts';
import { createHarness, type HarnessMode } from './helpers/harness.ts';
import { useRemoteHarnesses } from './helpers/remote-server.ts';

// Goldens recorded from Codex 0.169.0 by test/oracle/record-apply-patch.mjs: the same setup and
// calls, replayed through UnifiedExecTools locally and against a remote exec-server, must answer
// the original's text to the character (chunk id, wall time and working folder masked).

interface GoldenStep {
  call: 'apply_patch' | 'exec_command';
  input?: string;
  arguments?: Record<string, unknown>;
  output: string;
}

interface Golden {
  name: string;
  sandbox: 'bypass' | 'workspace-write' | 'read-only';
  setup: string;
  outside_written: string[];
  steps: GoldenStep[];
}

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'oracle', 'fixtures', 'apply-patch');
const goldens: Golden[] = readdirSync(dir)
  .filter((file) => file.startsWith('apply-patch-') && file.endsWith('.json'))
  .sort()
  .map((file) => JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as Golden);

/** The recorded targets outside the project (see the recorder). */
const OUTSIDE = '/var/tmp';
const OUTSIDE_PREFIX = 'execd-ap-';

async function outsideFiles(): Promise<string[]> {
  return (await readdir(OUTSIDE)).filter((name) => name.startsWith(OUTSIDE_PREFIX)).sort();
}

async function cleanOutside(): Promise<void> {
  for (const name of await outsideFiles()) await rm(path.join(OUTSIDE, name), { force: true });
}

function mask(text: string, workdir: RegExp | string): string {
  return text
    .replaceAll(workdir, 'W')
    .replace(/^Chunk ID: [0-9a-f]+$/gm, 'Chunk ID: <CHUNK>')
    .replace(/^Wall time: \d+(\.\d+)? seconds$/gm, 'Wall time: <WALL> seconds');
}

const RECORDED_WORKDIR = /\/tmp\/codex-oracle-[A-Za-z0-9]+\/work/g;
const PROFILES = {
  bypass: 'danger-full-access',
  'workspace-write': 'workspace-write',
  'read-only': 'read-only',
} as const;

useRemoteHarnesses();

test('the freeform apply_patch tool serialises exactly as the original declares it', () => {
  const recorded = JSON.parse(readFileSync(path.join(dir, 'tool-spec.json'), 'utf8')).apply_patch;
  expect(JSON.stringify(applyPatchFreeformToolSpec())).toBe(JSON.stringify(recorded));
});

beforeEach(cleanOutside);
afterEach(cleanOutside);

for (const mode of ['local', 'remote'] as const satisfies readonly HarnessMode[]) {
  describe(`apply_patch goldens (${mode})`, () => {
    for (const golden of goldens) {
      test(`${golden.name}: every answer equals the original's`, async () => {
        await using harness = await createHarness(mode, {
          manager: { approvalPolicy: 'never' },
          environment: { permissionProfile: PROFILES[golden.sandbox] },
        });
        execFileSync('/bin/sh', ['-c', golden.setup], { cwd: harness.dir });
        const answers: string[] = [];
        for (const step of golden.steps) {
          const result =
            step.call === 'apply_patch'
              ? await harness.tools.applyPatch(step.input ?? '')
              : await harness.tools.execCommand(step.arguments);
          answers.push(mask(result.text, harness.dir));
        }
        expect(answers).toEqual(golden.steps.map((step) => mask(step.output, RECORDED_WORKDIR)));
        // Checked from outside: a sandboxed run wrote nothing outside the project.
        expect(await outsideFiles()).toEqual(
          golden.outside_written.map((file) => path.basename(file)).sort(),
        );
      });
    }
  });
}
