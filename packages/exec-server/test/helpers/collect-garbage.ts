import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Full collections with nothing of the current job on the stack (WeakRefs hold for one job). */
export async function collectGarbage(): Promise<void> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  setFlagsFromString('--no-expose-gc');
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => setTimeout(resolve, 0));
    gc();
  }
}
