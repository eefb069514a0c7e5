import { parseToolText } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import { approxTokenCount, SecretMasker } from '../src/index.ts';
import { createHarness, type HarnessMode } from './helpers/harness.ts';
import { useRemoteHarnesses } from './helpers/remote-server.ts';

useRemoteHarnesses();

// Built from parts so that no scanner mistakes this file for a leak.
const AWS_KEY_ID = ['AKIA', 'IOSFODNN7', 'EXAMPLE'].join('');
const ENV_SECRET = 'env-Secret-Value-42';

/** The text without its per-call lines (chunk id, wall time). */
function stable(text: string): string {
  return text.replace(/^Chunk ID: .*\n/, '').replace(/^Wall time: .*\n/m, '');
}

const PROGRESS =
  "for i in $(seq 0 200); do printf '\\rprogress %3d%%' $((i / 2)); done; printf '\\r\\ndone\\n'";

describe.each<HarnessMode>(['local', 'remote'])('%s: output presentation', (mode) => {
  const presentation = {
    renderTerminal: true,
    secrets: new SecretMasker({ env: { DEPLOY_TOKEN: ENV_SECRET } }),
  } as const;

  test('a redrawn progress line comes back as its final state, in < 1/10 of the tokens', async () => {
    await using plain = await createHarness(mode);
    await using rendered = await createHarness(mode, { manager: { presentation } });
    const raw = await plain.execParsed({ cmd: PROGRESS, tty: true, yield_time_ms: 10_000 });
    const shown = await rendered.execParsed({ cmd: PROGRESS, tty: true, yield_time_ms: 10_000 });
    expect(raw.exitCode).toBe(0);
    expect(raw.output).toContain('\rprogress  99%\rprogress 100%');
    expect(shown).toMatchObject({ exitCode: 0, output: 'progress 100%\ndone\n' });
    expect(shown.originalTokenCount).toBe(Math.ceil(shown.output.length / 4));
    expect(approxTokenCount(shown.output) * 10).toBeLessThan(approxTokenCount(raw.output));
  });

  test('a full-screen pager shows its screen, returned at its prompt', async () => {
    await using h = await createHarness(mode, { manager: { presentation } });
    const cmd = 'seq 1 100 | TERM=xterm LESS= less';
    const shown = await h.execParsed({ cmd, tty: true, yield_time_ms: 30_000 });
    expect(shown.sessionId).toBe(1000);
    const lines = shown.output.split('\n');
    expect(lines.slice(0, 23)).toEqual(Array.from({ length: 23 }, (_, index) => String(index + 1)));
    expect(lines.at(-1)?.startsWith(':')).toBe(true);
    const quit = await h.writeParsed({ session_id: 1000, chars: 'q', yield_time_ms: 30_000 });
    expect(quit).toMatchObject({ sessionId: undefined, exitCode: 0 });
  });

  test('output without redraws or secrets is the original text, byte for byte', async () => {
    await using plain = await createHarness(mode);
    await using presented = await createHarness(mode, { manager: { presentation } });
    const cmd = "printf '\\033[32mgreen\\033[0m héllo ✓\\n'; echo second line";
    for (const tty of [true, false]) {
      const a = await plain.exec({ cmd, tty, yield_time_ms: 10_000 });
      const b = await presented.exec({ cmd, tty, yield_time_ms: 10_000 });
      expect(stable(b.text)).toBe(stable(a.text));
    }
  });

  test('secrets are masked, also one printed in two pieces, and the result says how many', async () => {
    await using h = await createHarness(mode, { manager: { presentation } });
    const half = AWS_KEY_ID.length / 2;
    const cmd = `printf '%s' '${AWS_KEY_ID.slice(0, half)}'; sleep 0.3; printf '%s\\n' '${AWS_KEY_ID.slice(half)}'; echo "v=${ENV_SECRET} ü"`;
    const result = await h.exec({ cmd, yield_time_ms: 10_000 });
    expect(result.success).toBe(true);
    expect(result.text).toMatch(/\nRedacted secrets: 2\nOutput:\n/);
    const output = result.text.slice(result.text.indexOf('Output:\n') + 'Output:\n'.length);
    expect(output).toBe('[redacted aws-access-key-id]\nv=[redacted env:DEPLOY_TOKEN] ü\n');
    expect(result.text).not.toContain(ENV_SECRET);
    // Without the line the text is the original's shape again.
    expect(parseToolText(result.text.replace('Redacted secrets: 2\n', '')).exitCode).toBe(0);
  });
});
