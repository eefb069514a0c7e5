// deploy/README.md's Docker steps, run for real where they touch the host: the token file they
// create must be readable by the image's user (uid 10001), which a `chmod 600` file is not.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';

const README = join(import.meta.dirname, '..', 'deploy', 'README.md');
const IMAGE_UID = 10001;
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** The shell lines of the guide's Docker block that make the token (docker itself not run). */
async function tokenSteps(): Promise<string[]> {
  const text = await readFile(README, 'utf8');
  const docker = text.slice(text.indexOf('## Docker'));
  const block = /```sh\n([\s\S]*?)```/.exec(docker)?.[1] ?? '';
  // Top-level lines only (docker run's continuation lines are indented), without docker itself.
  return block
    .split('\n')
    .filter((line) => line.trim() !== '' && !/^(#|docker )/.test(line) && !line.startsWith(' '));
}

describe.skipIf(process.platform !== 'linux' || !isRoot)('deploy/README.md: the Docker token', () => {
  test('the guide makes a token file the image user (uid 10001) can read, others cannot reach', async () => {
    const steps = await tokenSteps();
    expect(steps.some((line) => line.includes('openssl rand'))).toBe(true);
    const home = await mkdtemp(join(tmpdir(), 'deploy-guide-'));
    try {
      const made = spawnSync('bash', ['-euc', steps.join('\n')], { env: { ...process.env, HOME: home } });
      expect(made.status, made.stderr.toString()).toBe(0);
      const token = join(home, '.execd', 'token');
      expect((await readFile(token, 'utf8')).trim()).toMatch(/^[0-9a-f]{64}$/);
      // What the bind mount gives the container: the file itself (not its folder), read as uid
      // 10001 (in no group of the host's): its owner, group or other read bit must let it.
      const { mode, uid, gid } = await stat(token);
      const readable =
        (uid === IMAGE_UID && (mode & 0o400) !== 0) ||
        (gid === IMAGE_UID && (mode & 0o040) !== 0) ||
        (mode & 0o004) !== 0;
      expect(readable, `mode ${(mode & 0o777).toString(8)}, owner ${uid}:${gid}`).toBe(true);
      // On the host, other users cannot get to it through its folder.
      const throughFolder = spawnSync('cat', [token], { uid: 12345, gid: 12345 });
      expect(throughFolder.status).not.toBe(0);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
