import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { LAUNCHER_LIMITS_FAILED_EXIT_CODE, launcherLimitLines } from './launcher-lines.ts';

describe('launcherLimitLines', () => {
  test('a path with quotes and $(...) is written to, never run', () => {
    const dir = mkdtempSync(join(tmpdir(), 'execd-lines-'));
    try {
      const file = join(dir, `it's $(touch pwned) \`touch pwned\` "x"`);
      writeFileSync(file, '');
      const script = [...launcherLimitLines({ procsFiles: [file] }), 'echo $$'].join('\n');
      const result = spawnSync('/bin/bash', ['-c', script], { encoding: 'utf8', cwd: dir });
      expect(result.status).toBe(0);
      expect(readFileSync(file, 'utf8')).toBe(result.stdout);
      expect(() => readFileSync(join(dir, 'pwned'))).toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('nothing to do: no lines', () => {
    expect(launcherLimitLines({})).toEqual([]);
  });

  test('a file limit below one block is refused with invalidParams', () => {
    expect(() => launcherLimitLines({ maxFileBytes: 100 })).toThrow(
      expect.objectContaining({ code: 'invalidParams' }),
    );
  });

  test('a failed ulimit fails the launch before the command', () => {
    // In a user namespace nothing holds CAP_SYS_RESOURCE where it counts (the initial
    // namespace), so once the hard limit is lowered, asking for more fails.
    const script = ['ulimit -f 1', ...launcherLimitLines({ maxFileBytes: 4096 * 1024 }), 'echo ran'].join(
      '\n',
    );
    const result = spawnSync('unshare', ['--user', '/bin/bash', '-c', script], { encoding: 'utf8' });
    expect(result.status).toBe(LAUNCHER_LIMITS_FAILED_EXIT_CODE);
    expect(result.stdout).not.toContain('ran');
  });
});
