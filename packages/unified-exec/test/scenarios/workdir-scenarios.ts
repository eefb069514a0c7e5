import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type ApprovalRequest, DEFAULT_ENV_POLICY, type LocalEnvironmentOptions } from '../../src/index.ts';
import { createHarness, type Harness, type HarnessMode } from '../helpers/harness.ts';

// Outside every workspace-write root (/tmp and $TMPDIR are writable there), so that the
// workspace's parent and the other directory are writable only if the sandbox is wrong.
const OUTSIDE_PARENT = '/var/tmp';

/**
 * The model's `workdir` is never a writable root (security): under `workspace-write` a command
 * may run in any folder, but writes only in the environment's roots. Every variant attacks for
 * real and checks the host's disk from here.
 */
export function defineWorkdirScenarios(mode: HarnessMode): void {
  describe.skipIf(process.platform !== 'linux')(`${mode}: the model's workdir is not writable`, () => {
    let base: string; // the workspace's parent
    let workspace: string;
    let outside: string; // a sibling directory, unrelated to the workspace
    let home: string; // HOME of the shell-snapshot variant, with a .bashrc
    beforeAll(async () => {
      base = await mkdtemp(join(OUTSIDE_PARENT, 'uexec-base-'));
      workspace = join(base, 'workspace');
      home = join(base, 'home');
      await mkdir(join(workspace, 'sub'), { recursive: true });
      await mkdir(home);
      await writeFile(join(home, '.bashrc'), 'uexec_snapshot_fn() { echo "from-snapshot"; }\n');
      outside = await mkdtemp(join(OUTSIDE_PARENT, 'uexec-outside-'));
    });
    afterAll(async () => {
      await rm(base, { recursive: true, force: true });
      await rm(outside, { recursive: true, force: true });
    });

    // The denial must be seen at the early exit to be put to the approver; a generous grace
    // keeps that deterministic on a loaded machine (the call returns as soon as the command exits).
    const earlyExitGraceMs = 20_000;

    /** A workspace-write harness in `workspace` whose approver refuses every unsandboxed retry. */
    async function sandboxed(
      environment: LocalEnvironmentOptions = {},
    ): Promise<{ h: Harness; asked: ApprovalRequest[] }> {
      const asked: ApprovalRequest[] = [];
      const h = await createHarness(mode, {
        manager: {
          approvalPolicy: 'on-failure',
          approver: (request) => {
            asked.push(request);
            return 'denied';
          },
          earlyExitGraceMs,
        },
        environment: { permissionProfile: 'workspace-write', cwd: workspace, ...environment },
      });
      return { h, asked };
    }

    /** Runs `echo planted >> planted.txt` in `workdir` and checks that nothing was written. */
    async function expectRefusedIn(
      h: Harness,
      workdir: string,
      written: string,
      extra: Record<string, unknown> = {},
    ): Promise<void> {
      const result = await h.execParsed({
        cmd: 'echo planted >> planted.txt && echo wrote',
        workdir,
        ...extra,
      });
      expect(result.exitCode).toBe(1);
      expect(result.output.toLowerCase()).toMatch(/read-only file system|permission denied/);
      expect(result.output).not.toContain('wrote');
      expect(existsSync(written)).toBe(false);
    }

    test('a workdir outside the workspace, its parent, or `..` runs there but cannot write', async () => {
      const { h, asked } = await sandboxed();
      await using _ = h;
      // It may run there (and read):
      expect(await h.execParsed({ cmd: 'pwd', workdir: outside })).toMatchObject({
        exitCode: 0,
        output: `${outside}\n`,
      });
      await expectRefusedIn(h, outside, join(outside, 'planted.txt'));
      await expectRefusedIn(h, base, join(base, 'planted.txt'));
      await expectRefusedIn(h, '..', join(base, 'planted.txt'));
      // Each refusal was the sandbox's (put to the approver as a retry, and refused there).
      expect(asked.map((request) => [request.purpose, request.cwd])).toEqual([
        ['sandbox_retry', outside],
        ['sandbox_retry', base],
        ['sandbox_retry', base],
      ]);
    });

    test('commands in the workspace (or a folder of it) still write', async () => {
      const { h, asked } = await sandboxed();
      await using _ = h;
      expect(await h.execParsed({ cmd: 'echo one >> written.txt && echo ok' })).toMatchObject({
        exitCode: 0,
        output: 'ok\n',
      });
      expect(await h.execParsed({ cmd: 'echo two >> written.txt && echo ok', workdir: 'sub' })).toMatchObject(
        { exitCode: 0, output: 'ok\n' },
      );
      expect(await readFile(join(workspace, 'written.txt'), 'utf8')).toBe('one\n');
      expect(await readFile(join(workspace, 'sub', 'written.txt'), 'utf8')).toBe('two\n');
      expect(asked).toEqual([]);
      await rm(join(workspace, 'written.txt'));
      await rm(join(workspace, 'sub', 'written.txt'));
    });

    test('with shell snapshots: the snapshot path writes in the workspace only; a workdir elsewhere cannot write', async () => {
      const { h } = await sandboxed({
        shellSnapshot: true,
        allowLoginShell: true,
        envPolicy: { ...DEFAULT_ENV_POLICY, set: { HOME: home } },
      });
      await using _ = h;
      // In the environment's cwd a login command runs through the snapshot (the rc's function exists).
      const inWorkspace = await h.execParsed({
        cmd: 'uexec_snapshot_fn && echo snap >> snap.txt',
        login: true,
      });
      expect(inWorkspace).toMatchObject({ exitCode: 0, output: 'from-snapshot\n' });
      expect(await readFile(join(workspace, 'snap.txt'), 'utf8')).toBe('snap\n');
      await rm(join(workspace, 'snap.txt'));
      await expectRefusedIn(h, outside, join(outside, 'planted.txt'), { login: true });
      await expectRefusedIn(h, base, join(base, 'planted.txt'), { login: true });
    });

    test('with a managed network (exec-server path): a workdir elsewhere cannot write', async () => {
      const { h } = await sandboxed({ managedNetwork: { allowedDomains: [], askForUnknownHosts: false } });
      await using _ = h;
      await expectRefusedIn(h, outside, join(outside, 'planted.txt'));
      await expectRefusedIn(h, base, join(base, 'planted.txt'));
      expect(await h.execParsed({ cmd: 'echo net >> net.txt && echo ok' })).toMatchObject({
        exitCode: 0,
        output: 'ok\n',
      });
      expect(existsSync(join(workspace, 'net.txt'))).toBe(true);
      await rm(join(workspace, 'net.txt'));
    });
  });
}
