import { describe, expect, test } from 'vitest';
import {
  execCommandToolSpec,
  formatExecCommandToolOutput,
  HeadTailBuffer,
  parseExecCommandArgs,
  parseWriteStdinArgs,
  toOpenAiFunctionTool,
  writeStdinToolSpec,
} from '../../src/index.ts';
import {
  expandSegments,
  type Fixture,
  type FixtureStep,
  loadScenarioFixtures,
  loadToolSpecs,
  normalizeOutput,
} from './fixtures.ts';

// Golden tests: the same inputs the original was given (recorded by record.mjs), fed to our
// formatter and parser, must produce the original's text to the character.

function parse(fixture: Fixture, step: FixtureStep) {
  return step.call === 'exec_command'
    ? parseExecCommandArgs(step.raw_arguments, fixture.parse_options)
    : parseWriteStdinArgs(step.raw_arguments.replace(/"\$LAST_SESSION"/, '1000'));
}

function render(fixture: Fixture, step: FixtureStep): string {
  const parsed = parse(fixture, step);
  if (!parsed.ok) throw new Error(`arguments of an output step did not parse: ${parsed.message}`);
  const bytes = expandSegments(step.input.bytes ?? []);
  // Feed in pipe-sized pieces, as a process manager would.
  const buffer = new HeadTailBuffer();
  for (let at = 0; at < bytes.length; at += 65_536) buffer.pushChunk(bytes.subarray(at, at + 65_536));
  const maxOutputTokens = parsed.args.max_output_tokens;
  return formatExecCommandToolOutput({
    chunkId: '0a1b2c',
    wallTimeSeconds: 0.25,
    ...(step.input.exit_code !== undefined ? { exitCode: step.input.exit_code } : {}),
    ...(step.input.running ? { processId: 1000 } : {}),
    originalTokenCount: Math.ceil(buffer.totalBytes / 4),
    rawOutput: buffer.toBytesWithOmissionMarker(),
    omittedBytes: buffer.omittedBytes,
    ...(maxOutputTokens !== undefined ? { maxOutputTokens } : {}),
    turnPolicy: fixture.turn_policy,
  });
}

for (const fixture of loadScenarioFixtures()) {
  describe(`oracle fixture ${fixture.name}`, () => {
    fixture.steps.forEach((step, index) => {
      const label = `#${index} ${step.call} ${step.raw_arguments.slice(0, 80)}`;
      if (step.input.kind === 'output') {
        test(`${label} renders the original's text`, () => {
          expect(normalizeOutput(render(fixture, step))).toBe(normalizeOutput(step.output));
        });
      } else if (step.input.kind === 'error') {
        test(`${label} is rejected with the original's text`, () => {
          expect(parse(fixture, step)).toEqual({ ok: false, message: step.output });
        });
      } else {
        test(`${label} parses (its answer needs a process manager)`, () => {
          expect(parse(fixture, step).ok).toBe(true);
        });
      }
    });
  });
}

describe('oracle tool specs', () => {
  const variants = loadToolSpecs();
  const cases = {
    default: {},
    exec_permission_approvals: { execPermissionApprovals: true },
    // The live peer (0.169.0) still declares `login` when login shells are disabled (it only
    // rejects `login: true`); spec §8.7 says the older source hid it, which allowLoginShell does.
    login_disabled: {},
  } as const;
  for (const [name, options] of Object.entries(cases)) {
    test(`${name}: exec_command and write_stdin serialise exactly as the original's`, () => {
      const recorded = variants[name] ?? [];
      const ours = [
        toOpenAiFunctionTool(execCommandToolSpec(options)),
        toOpenAiFunctionTool(writeStdinToolSpec()),
      ];
      expect(JSON.stringify(ours)).toBe(JSON.stringify(recorded));
    });
  }
});
