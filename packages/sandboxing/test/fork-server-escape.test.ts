// The fork server's helper starts sandboxed commands (their bubblewrap is its child): a command in
// the sandbox must not be able to reach it. The helper runs whatever request reaches its stdin;
// a sandboxed command tries to find it and send it one (a `touch` outside every sandbox), and
// the host checks that nothing ran and the command held nothing but its stdio.
import { existsSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ForkServer, forkServerHelperProgram } from '@execd/pty-utils';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { requireBwrap, runSandboxed, tempDir } from './helpers/index.ts';

/** How each helper shows in `/proc/PID/cmdline` (NULs as spaces). */
const HELPER_COMMAND_LINES = { python: 'python3 -I -S -c', perl: 'perl -e' } as const;

/** A spawn request in the helper's framing: `touch <marker>` outside every sandbox. */
function request(marker: string): Buffer {
  const fields = ['s', 'injected', 'n', '/', '/bin/sh', '3', 'sh', '-c', `touch ${marker}`, '0', '0'];
  const body = Buffer.from(fields.join('\0'));
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length);
  return Buffer.concat([head, body]);
}

for (const helperKind of ['python', 'perl'] as const)
  describe.skipIf(process.platform !== 'linux' || forkServerHelperProgram(helperKind) === undefined)(
    `the fork server (${helperKind}), attacked from a sandbox it started`,
    () => {
      let forkServer: ForkServer;
      beforeAll(async () => {
        requireBwrap();
        const started = await ForkServer.start({ helpers: [helperKind] });
        if (started === undefined) throw new Error(`the ${helperKind} fork server cannot run here`);
        forkServer = started;
      });
      afterAll(() => forkServer?.close());

      // In a terminal, the Python helper starts the command too (perl's leaves it to node-pty).
      for (const tty of [false, true])
        test(`a sandboxed command ${tty ? 'in a terminal' : 'on pipes'} cannot see the helper, open its stdin or hold any of its descriptors`, async () => {
          using ws = tempDir();
          using outside = tempDir();
          const marker = join(outside.path, 'pwned');
          const helper = forkServer.helperPid;
          const frame = request(marker).toString('base64');
          const script = [
            `ls /proc/${helper}/ >/dev/null 2>&1 && echo HELPER-VISIBLE`,
            `printf %s '${frame}' | base64 -d > /proc/${helper}/fd/0 2>/dev/null && echo INJECTED`,
            // Any helper the sandbox can see, in case the pid differs in there.
            'for p in /proc/[0-9]*; do',
            `  if tr "\\0" " " < $p/cmdline 2>/dev/null | grep -aq "^[^ ]*${HELPER_COMMAND_LINES[helperKind]}"; then`,
            `    echo "HELPER-SEEN $p"; printf %s '${frame}' | base64 -d > $p/fd/0 2>/dev/null && echo INJECTED; fi`,
            'done',
            'ls -l /proc/$$/fd/',
          ].join('\n');
          const result = await runSandboxed(script, { cwd: ws.path, forkServer, tty });
          expect(result.sandboxType).toBe('linuxSeccomp');
          expect(result.stdout).not.toContain('HELPER-VISIBLE');
          expect(result.stdout).not.toContain('HELPER-SEEN');
          expect(result.stdout).not.toContain('INJECTED');
          const fds = result.stdout
            .replaceAll('\r\n', '\n')
            .split('\n')
            .filter((line) => / -> /.test(line) && !/ -> \/proc\/\d+\/fd$/.test(line));
          expect(fds.map((line) => line.split(' -> ')[0]!.split(' ').at(-1))).toEqual(['0', '1', '2']);
          // Seen from the host, after the command is done: nothing ran.
          expect(existsSync(marker)).toBe(false);

          // The controls: from the host the helper is there to be found, and its request channel is
          // a socket pair, which even the host cannot reopen through /proc.
          expect(readFileSync(`/proc/${helper}/cmdline`, 'utf8').replaceAll('\0', ' ')).toContain(
            HELPER_COMMAND_LINES[helperKind],
          );
          expect(() => openSync(`/proc/${helper}/fd/0`, 'w')).toThrow(/ENXIO/);
        });
    },
  );
