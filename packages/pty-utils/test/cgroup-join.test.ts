// Which way a child joins its cgroups. The files stand in for a group's `cgroup.procs` and `tasks`
// and for the spawning thread's home `tasks` (plain files, so no cgroup is needed): the perl
// wrapper writes the child's pid into `cgroup.procs`; a fork from inside the groups writes `0`
// (the spawning thread) into the group's `tasks` and then into the home, and runs no wrapper.
// The real cgroup behaviour is tested in sandboxing's containment suite.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { joinWrapperPerl } from '../src/internal/cgroup-join.ts';
import { closeSpawnedAfterEach, collect, fakeGroup, pipe, pty } from './helpers/harness.ts';

closeSpawnedAfterEach();

const read = (file: string): string => readFileSync(file, 'utf8');

describe.skipIf(process.platform !== 'linux' || joinWrapperPerl() === null)('joining cgroups', () => {
  for (const [kind, spawn] of [
    ['pipes', pipe],
    ['a PTY', pty],
  ] as const) {
    test(`${kind}: with cgroupHome the child is forked inside the groups, without the wrapper`, async () => {
      const group = fakeGroup();
      await using proc = await spawn(['/bin/echo', 'ran'], {
        joinCgroups: [group.procs],
        cgroupHome: [group.home],
      });
      expect(Object.values(await collect(proc)).join('')).toContain('ran');
      expect(await proc.closed).toEqual({ exitCode: 0, signal: null });
      expect(read(group.tasks)).toBe('0');
      expect(read(group.home)).toBe('0');
      expect(read(group.procs)).toBe('');
    });

    test(`${kind}: without cgroupHome the wrapper writes the child's pid before the program runs`, async () => {
      const group = fakeGroup();
      await using proc = await spawn(['/bin/echo', 'ran'], { joinCgroups: [group.procs] });
      expect(Object.values(await collect(proc)).join('')).toContain('ran');
      expect(await proc.closed).toEqual({ exitCode: 0, signal: null });
      expect(read(group.procs)).toBe(`${proc.pid}\n`);
      expect(read(group.tasks)).toBe('');
    });
  }
});
