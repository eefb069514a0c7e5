// Run as its own process (bundled by heap-policy.test.ts): V8's flags are per process.
// argv[2] `policy` installs the heap policy (young generation capped at 4 MiB), `none` does not.
// Prints one JSON line: the young generation's size after an allocation-heavy loop whose objects
// survive a while, and what a burst of large inbound frames left on the heap.
import { setImmediate as nextTurn } from 'node:timers/promises';
import v8 from 'node:v8';
import { installHeapPolicy, noteInboundFrame } from '../../src/server/heap-policy.ts';

const MiB = 1024 * 1024;
const policy =
  process.argv[2] === 'policy' ? installHeapPolicy({ youngGenerationBytes: 4 * MiB }) : undefined;
const youngGeneration = (): number =>
  v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;

// Survivors push V8 to grow the young generation (to 32 MiB by default).
const kept: object[] = [];
// Turns of the event loop, as a server's: the cap is applied between them, after a collection.
for (let i = 0; i < 20_000; i++) {
  if (i % 50 === 0) await nextTurn();
  const item: Record<string, string> = {};
  for (let k = 0; k < 100; k++) item[`k${k}-${i}`] = `value ${i} ${k}`;
  kept.push(item);
  if (kept.length > 300) kept.shift();
}
kept.length = 0;

// A burst of large frames, parsed and refused: 32 MiB of strings, garbage once handled.
let frames: string[] | undefined = [];
for (let i = 0; i < 64; i++) {
  // Flat, distinct, on the heap (a repeat() result is a small tree; over ~1 MB Node makes it external).
  frames.push(Buffer.alloc(MiB / 2, 97 + (i % 26)).toString('latin1'));
  noteInboundFrame(MiB / 2);
}
const heapBefore = process.memoryUsage().heapUsed;
frames = undefined;
await nextTurn();
await nextTurn();
const heapAfter = process.memoryUsage().heapUsed;
process.stdout.write(
  `${JSON.stringify({
    youngGenerationBytes: youngGeneration(),
    cappedAtBytes: policy?.cappedAtBytes() ?? null,
    collections: policy?.reclaimer()?.collections ?? 0,
    heapBefore,
    heapAfter,
  })}\n`,
);
policy?.close();
