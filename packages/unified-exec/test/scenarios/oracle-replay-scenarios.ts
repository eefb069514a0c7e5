import { describe, expect, test } from 'vitest';
import type { ApprovalPolicy } from '../../src/index.ts';
import { createHarness, type HarnessMode } from '../helpers/harness.ts';
import { loadScenarioFixtures, normalizeOutput } from '../oracle/fixtures.ts';

/**
 * The recorded oracle fixtures, replayed for real: each step's command runs through the tools
 * and the text must equal what the original sent (after normalising chunk id, wall time and
 * session id). Session ids of the recording are mapped onto the ids this run hands out.
 */
export function defineOracleReplayScenarios(mode: HarnessMode): void {
  describe(`${mode}: oracle fixtures replayed end to end`, () => {
    for (const fixture of loadScenarioFixtures()) {
      test(`${fixture.name}`, async () => {
        const parseOptions = fixture.parse_options as {
          approvalPolicy?: ApprovalPolicy;
          allowLoginShell?: boolean;
        };
        await using h = await createHarness(mode, {
          manager: { approvalPolicy: parseOptions.approvalPolicy ?? 'on-request' },
          environment: { allowLoginShell: parseOptions.allowLoginShell ?? false },
          turnPolicy: fixture.turn_policy,
        });
        const sessionIds = new Map<string, string>();
        let lastSession: string | undefined;
        for (const [index, step] of fixture.steps.entries()) {
          let args = step.raw_arguments.replace(/"\$LAST_SESSION"/, lastSession ?? '1000');
          args = args.replace(/("session_id"\s*:\s*)(\d+)/, (whole, prefix: string, id: string) =>
            sessionIds.has(id) ? `${prefix}${sessionIds.get(id)}` : whole,
          );
          const result = step.call === 'exec_command' ? await h.exec(args) : await h.write(args);
          const label = `step #${index} ${step.call} ${step.raw_arguments.slice(0, 60)}`;
          if (step.input.kind === 'output') {
            expect(normalizeOutput(result.text), label).toBe(normalizeOutput(step.output));
            const recorded = /Process running with session ID (\d+)/.exec(step.output)?.[1];
            const actual = /Process running with session ID (\d+)/.exec(result.text)?.[1];
            if (recorded !== undefined && actual !== undefined) {
              sessionIds.set(recorded, actual);
              lastSession = actual;
            }
          } else {
            expect(result, label).toEqual({ text: step.output, success: false });
          }
        }
        expect(h.manager.size).toBe(0);
      });
    }
  });
}
