import { expect, test } from 'vitest';
import { proxyEnvironment } from './proxy-env.ts';

test('proxyEnvironment names the bridge ports', () => {
  const env = proxyEnvironment({ httpPort: 3128, socksPort: 1080 });
  expect(env).toMatchObject({
    HTTP_PROXY: 'http://127.0.0.1:3128',
    https_proxy: 'http://127.0.0.1:3128',
    ALL_PROXY: 'socks5h://127.0.0.1:1080',
    NO_PROXY: 'localhost,127.0.0.1,::1',
    CODEX_NETWORK_PROXY_ACTIVE: '1',
  });
});
