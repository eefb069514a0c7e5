// Run as its own process (bundled by orphan-guard.test.ts): a server's guard, exercised, then the
// server gone. argv[2]: a process group to guard last; argv[3]: how many guards (each a group and
// a cgroup file, none of them real) to take and then forget, in shuffled order, before it.
// Then argv[4...]: placeholders, `guard:PATH` (guarded with the last group) or `forget:PATH`
// (guarded with a group of its own, then forgotten).
// Prints the watchdog's pid, then exits: the watchdog's stdin ends and it must act.
import { readFileSync } from 'node:fs';
import { OrphanGuard } from '../../src/local/orphan-guard.ts';

const guarded = Number(process.argv[2]);
const count = Number(process.argv[3]);
// Group ids past pid_max: no process can have them, so killing them is harmless.
const pidMax = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8'));
const guard = new OrphanGuard();
const handles = Array.from({ length: count }, (_, i) =>
  guard.protect(pidMax + 1 + i, { groupProcsFiles: [`/nonexistent/execd-probe/${i}/cgroup.procs`] }),
);
for (let i = handles.length - 1; i > 0; i--) {
  const j = Math.floor(Math.random() * (i + 1));
  [handles[i], handles[j]] = [handles[j]!, handles[i]!];
}
for (const handle of handles) handle[Symbol.dispose]();
const placeholders = (kind: string) =>
  process.argv
    .slice(4)
    .filter((arg) => arg.startsWith(`${kind}:`))
    .map((arg) => arg.slice(kind.length + 1));
guard.protect(pidMax + 1, { placeholders: placeholders('forget') })[Symbol.dispose]();
guard.protect(guarded, { placeholders: placeholders('guard') });
// What a server still had queued for the watchdog when it died would be lost: here, nothing is.
await guard.flushed();
process.stdout.write(`${guard.watchdogPid()}\n`, () => process.exit(0));
