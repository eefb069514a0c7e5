// The vitest `setupFiles` entry of every test folder (added by defineExecdConfig): runs the leak
// check after every test file and, where the config says `leakCheck: 'test'`, after every test.
// Its hooks are registered before the test file's, so its `after*` hooks run after the file's own
// cleanup (vitest runs `after*` hooks in reverse order).
import { afterAll, afterEach, beforeEach, inject } from 'vitest';
import {
  beginTestTracking,
  endTestTracking,
  expectNoLeaks,
  forgetTracked,
  type LeakBaseline,
  takeLeakBaseline,
} from './leak-check.ts';

// Taken when the file starts (before its imports run any code), so module-level servers count.
const fileBaseline = takeLeakBaseline();

if (inject('execdLeakCheck') === 'test') {
  let testBaseline: LeakBaseline | undefined;
  beforeEach(() => {
    testBaseline = takeLeakBaseline();
    beginTestTracking();
  });
  afterEach(async () => {
    try {
      if (testBaseline !== undefined)
        await expectNoLeaks(testBaseline, { scope: 'the test', tracked: 'test' });
    } finally {
      endTestTracking();
    }
  });
}

afterAll(async () => {
  try {
    await expectNoLeaks(fileBaseline, { scope: 'the test file' });
  } finally {
    forgetTracked();
  }
});
