import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';

let collector: (() => void) | undefined;

/**
 * A full garbage collection, after the current job has ended (a `WeakRef` made in it cannot be
 * cleared before): for tests that check memory is let go. Works without `--expose-gc`: the
 * function comes from a context made while the flag is briefly on.
 */
export async function collectGarbage(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  collector ??= exposedCollector();
  collector();
}

function exposedCollector(): () => void {
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return () => exposed();
  v8.setFlagsFromString('--expose-gc');
  try {
    const gc = runInNewContext('gc') as () => void;
    return () => gc();
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
}
