import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { createHarness, type HarnessMode } from '../helpers/harness.ts';

/** Shell snapshots (spec §6.2): a local environment then runs login commands through an in-process exec-server. */
export function defineSnapshotScenarios(mode: HarnessMode): void {
  describe(`${mode}: shell snapshot`, () => {
    test('login commands run with the state captured from the shell rc; `login: false` runs without it', async () => {
      await using h = await createHarness(mode, {
        environment: { shellSnapshot: true, allowLoginShell: true },
      });
      const home = join(h.dir, 'home');
      await mkdir(home);
      await writeFile(
        join(home, '.bashrc'),
        'uexec_snapshot_fn() { echo "from-snapshot:$1"; }\nexport SNAP_EXPORTED=yes\n',
      );
      // The policy points HOME at the fixture home for the capture and for the commands.
      const withHome = { ...h.environment.settings.envPolicy, set: { HOME: home } };
      Object.defineProperty(h.environment.settings, 'envPolicy', { value: withHome });
      const restored = await h.execParsed({ cmd: 'uexec_snapshot_fn ok; echo "exported=$SNAP_EXPORTED"' });
      expect(restored).toMatchObject({ exitCode: 0, output: 'from-snapshot:ok\nexported=yes\n' });
      const again = await h.execParsed({ cmd: 'uexec_snapshot_fn again' });
      expect(again.output).toBe('from-snapshot:again\n');
      const plain = await h.execParsed({
        cmd: 'type uexec_snapshot_fn >/dev/null 2>&1 || echo missing',
        login: false,
      });
      expect(plain.output).toBe('missing\n');
    });
  });
}
