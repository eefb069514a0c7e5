// A folder on the way to a protected path, moved from inside a sandbox. A command may rename any
// folder of its writable root that is not a mount point; a folder holding a protected path (a
// nested repository's `.git`, a denied file) moved aside and replaced by a symlink while another
// sandbox is starting made bubblewrap bind that sandbox's protection through the symlink, leaving
// the real path writable there (measured before the fix: 4 of 105 starts wrote into the nested
// repository's hooks, which the host's git would run). Every such folder is now a mount point in
// each sandbox of the plan, so the move itself fails.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import {
  codexSandbox,
  requireBwrap,
  runSandboxed,
  special,
  startSandboxed,
  tempDir,
} from './helpers/index.ts';

beforeAll(() => {
  requireBwrap();
});

const SECRET = 'swap-secret-1729';

/** A workspace holding a nested repository (`vendor/lib/.git`, read-only in every sandbox). */
function nestedRepository(ws: string): void {
  mkdirSync(join(ws, '.git'));
  mkdirSync(join(ws, 'vendor', 'lib', '.git', 'hooks'), { recursive: true });
  writeFileSync(join(ws, 'vendor', 'lib', '.git', 'config'), '[core]\n');
}

/** Every file named `name` under `dir`. */
function found(dir: string, name: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((path) => path.endsWith(name));
}

describe('folders on the way to a protected path stay where they are', () => {
  test('the folders holding a nested repository cannot be moved or removed; the rest stays writable', async () => {
    using ws = tempDir();
    nestedRepository(ws.path);
    const result = await runSandboxed(
      [
        'mv vendor vendor2 && echo MOVED-VENDOR',
        'mv vendor/lib vendor/lib2 && echo MOVED-LIB',
        'rm -rf vendor && echo REMOVED',
        'mkdir decoy && mv -T decoy vendor && echo REPLACED',
        'echo x > vendor/lib/.git/hooks/pre-commit && echo HOOKED',
        'echo fine > vendor/new.txt && mkdir vendor/lib/src && echo WRITABLE',
      ].join('; '),
      { cwd: ws.path },
    );
    expect(result.stdout).toBe('WRITABLE\n');
    expect(result.stderr).toMatch(/Device or resource busy/);
    // From outside: all where it was, the hook not written, the ordinary writes made.
    expect(readFileSync(join(ws.path, 'vendor', 'lib', '.git', 'config'), 'utf8')).toBe('[core]\n');
    expect(existsSync(join(ws.path, 'vendor', 'lib', '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(existsSync(join(ws.path, 'vendor2'))).toBe(false);
    expect(readFileSync(join(ws.path, 'vendor', 'new.txt'), 'utf8')).toBe('fine\n');
  });

  test('the folders holding a denied file cannot be moved to read it elsewhere', async () => {
    using ws = tempDir();
    mkdirSync(join(ws.path, 'conf', 'keys'), { recursive: true });
    writeFileSync(join(ws.path, 'conf', 'keys', 'server.pem'), SECRET);
    const context = codexSandbox(ws.path, [
      { path: special('root'), access: 'read' },
      { path: special('project_roots'), access: 'write' },
      { path: { type: 'glob_pattern', pattern: '**/*.pem' }, access: 'deny' },
    ]);
    const result = await runSandboxed(
      'mv conf conf2; mv conf/keys conf/k2; cat conf2/keys/server.pem conf/k2/server.pem conf/keys/server.pem',
      { cwd: ws.path, context },
    );
    expect(result.aggregated).not.toContain(SECRET);
    expect(result.stderr).toMatch(/Device or resource busy/);
    expect(readFileSync(join(ws.path, 'conf', 'keys', 'server.pem'), 'utf8')).toBe(SECRET);
    expect(existsSync(join(ws.path, 'conf2'))).toBe(false);
  });

  test('a command swapping those folders while other sandboxes start never gets one to write the repository', async () => {
    using ws = tempDir();
    nestedRepository(ws.path);
    // The attack: move the folder aside, a symlink to a decoy in its place, then everything back,
    // over and over, while sandboxes of the same plan start and try to write the hooks.
    const swapper = await startSandboxed(
      [
        '/bin/bash',
        '-c',
        'mkdir -p decoy/lib/.git; end=$((SECONDS + 3)); n=0\n' +
          'while [ $SECONDS -lt $end ]; do\n' +
          '  mv -T vendor vendor2 2>/dev/null || { echo "blocked after $n"; exit 0; }\n' +
          '  ln -s decoy vendor; sleep 0.0005; rm vendor; mv -T vendor2 vendor; n=$((n + 1))\n' +
          'done; echo "swapped $n times"',
      ],
      { cwd: ws.path },
    );
    await using child = swapper.process;
    const attempts: string[] = [];
    for (let i = 0; i < 15; i++) {
      const result = await runSandboxed(
        `echo x > ${ws.path}/vendor/lib/.git/hooks/post-checkout && echo WROTE; echo x > ${ws.path}/vendor2/lib/.git/hooks/post-checkout && echo WROTE`,
        { cwd: ws.path },
      );
      attempts.push(result.stdout);
    }
    let told = '';
    for await (const chunk of child.output()) told += Buffer.from(chunk.bytes).toString();
    await child.closed;
    expect(attempts.filter((stdout) => stdout.includes('WROTE'))).toEqual([]);
    expect(found(ws.path, 'post-checkout')).toEqual([]);
    expect(told).toBe('blocked after 0\n');
    expect(readFileSync(join(ws.path, 'vendor', 'lib', '.git', 'config'), 'utf8')).toBe('[core]\n');
  });
});
