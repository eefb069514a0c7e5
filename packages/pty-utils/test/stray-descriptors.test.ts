// A terminal's master is not close-on-exec (node-pty makes it so): a command started while another
// command's terminal is open must not get it, or it could read that session and type into it.
import { listedFds, openFds } from '@execd/test-kit';
import { describe, expect, test } from 'vitest';
import { strayDescriptorsOpen } from '../src/internal/stray-descriptors.ts';
import { closeSpawnedAfterEach, collect, pipe, pty, Transcript } from './helpers/harness.ts';

closeSpawnedAfterEach();

/**
 * Lists the shell's own descriptors (`ls -l`, a child, so the shell holds nothing else meanwhile)
 * and writes INJECTED into every terminal device among them, through the descriptor itself.
 */
const PROBE = [
  'ls -l /proc/$$/fd/',
  'for f in /proc/$$/fd/*; do',
  `  n=\${f##*/}`,
  '  if [ "$n" -gt 2 ] && [ -c "$f" ]; then printf "INJECTED\\n" >&"$n"; fi',
  'done',
].join('\n');

describe.skipIf(process.platform !== 'linux')('descriptors a command did not ask for', () => {
  test("a command gets no other command's terminal master, on pipes or in a PTY", async () => {
    await using victim = await pty(['/bin/cat']);
    const victimOutput = new Transcript(victim);
    await victim.write('ready\n');
    await victimOutput.until('ready');
    expect(strayDescriptorsOpen()).toBe(true);

    await using onPipes = await pipe(['/bin/bash', '-c', PROBE]);
    const piped = (await collect(onPipes)).stdout;
    await using inPty = await pty(['/bin/bash', '-c', PROBE]);
    const inTerminal = (await collect(inPty)).pty;

    // Seen from outside: nothing reached the victim's terminal.
    await victim.write('done\n');
    await victimOutput.until(/done\r?\n[\s\S]*done/);
    expect(victimOutput.text).not.toContain('INJECTED');
    // And neither command held anything but its stdio.
    expect(piped).toContain('0 -> ');
    expect(listedFds(piped)).toEqual(['0', '1', '2']);
    expect(listedFds(inTerminal)).toEqual(['0', '1', '2']);
  });

  test('once the last terminal is closed, spawns go straight to the program again', async () => {
    const terminal = await pty(['/bin/cat']);
    expect(strayDescriptorsOpen()).toBe(true);
    await terminal.close();
    expect(strayDescriptorsOpen()).toBe(false);
    // ...and rightly: this process holds no terminal master any more.
    expect([...openFds('self').values()].filter((target) => target.endsWith('ptmx'))).toEqual([]);
  });
});
