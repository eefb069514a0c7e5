// Helpers of the managed-network (`proxied`) tests: the test resolver. (No proxy listener or
// bridge process may be left behind: the kit's leak check, after each test, fails on either.)
import { createStaticResolver, type NetworkResolver } from '@execd/network-proxy';

/** Maps the test names to 127.0.0.1 (like `--add-host`); the real network is never used. */
export const TEST_RESOLVER: NetworkResolver = createStaticResolver({
  'allowed.test': '127.0.0.1',
  'denied.test': '127.0.0.1',
  'ask.test': '127.0.0.1',
  'unknown.test': '127.0.0.1',
});
