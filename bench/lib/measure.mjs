// Small helpers shared by *.bench.mjs files (import with a relative path).

/**
 * Measures `fn` (synchronous) and returns the median operations per second over `rounds` rounds
 * of at least `roundMs` each, after one warm-up round. No thresholds: it only measures.
 */
export function opsPerSecond(fn, { rounds = 5, roundMs = 400 } = {}) {
  const samples = [];
  for (let round = -1; round < rounds; round++) {
    let iterations = 0;
    const started = performance.now();
    let elapsed = 0;
    do {
      fn();
      iterations++;
      elapsed = performance.now() - started;
    } while (elapsed < roundMs);
    if (round >= 0) samples.push((iterations * 1000) / elapsed);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

/**
 * Measures several functions in interleaved rounds (a, b, a, b, ...), so load on a shared machine
 * hits all of them alike; returns the median ops/s of each, by key.
 */
export function compareOpsPerSecond(fns, { rounds = 5, roundMs = 400 } = {}) {
  const samples = Object.fromEntries(Object.keys(fns).map((key) => [key, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [key, fn] of Object.entries(fns)) samples[key].push(opsPerSecond(fn, { rounds: 1, roundMs }));
  }
  return Object.fromEntries(
    Object.entries(samples).map(([key, values]) => [
      key,
      values.sort((a, b) => a - b)[Math.floor(values.length / 2)],
    ]),
  );
}

/** One figure in the format README.md defines; `ratio` is execd / baseline. */
export function figure({ figure, execd, baseline = null, unit, baselineName = null }) {
  return {
    figure,
    execd,
    baseline,
    unit,
    ratio: baseline === null || baseline === 0 ? null : execd / baseline,
    baselineName,
  };
}

/** Prints the result line; it must be the last line this bench writes to stdout. */
export function emit(name, figures) {
  process.stdout.write(`${JSON.stringify({ name, figures })}\n`);
}
