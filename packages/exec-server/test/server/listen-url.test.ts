// Spec §8.6 transport_tests.rs: parse_listen_url cases, plus the bound-URL format.
import { describe, expect, test } from 'vitest';
import {
  DEFAULT_LISTEN_URL,
  formatWebSocketUrl,
  isLoopbackAddress,
  parseListenUrl,
} from '../../src/server/index.ts';

describe('parseListenUrl', () => {
  test('parse_listen_url_accepts_default_websocket_url', () => {
    expect(parseListenUrl(DEFAULT_LISTEN_URL)).toEqual({ kind: 'websocket', host: '127.0.0.1', port: 0 });
  });

  test('parse_listen_url_accepts_stdio and stdio://', () => {
    expect(parseListenUrl('stdio')).toEqual({ kind: 'stdio' });
    expect(parseListenUrl('stdio://')).toEqual({ kind: 'stdio' });
  });

  test('parse_listen_url_accepts_websocket_url (IPv4 and bracketed IPv6)', () => {
    expect(parseListenUrl('ws://0.0.0.0:4321')).toEqual({ kind: 'websocket', host: '0.0.0.0', port: 4321 });
    expect(parseListenUrl('ws://[::1]:65535')).toEqual({ kind: 'websocket', host: '::1', port: 65535 });
  });

  test.each([
    'ws://localhost:1234',
    'ws://127.0.0.1',
    'ws://127.0.0.1:99999',
    'ws://127.0.0.1:12x',
    'ws://::1:80',
    'ws://127.0.0.1:80/',
    'ws://',
  ])('parse_listen_url_rejects_invalid_websocket_url %s', (url) => {
    expect(() => parseListenUrl(url)).toThrow(
      `invalid websocket --listen URL \`${url}\`; expected \`ws://IP:PORT\``,
    );
  });

  test.each(['http://127.0.0.1:1234', 'wss://127.0.0.1:1', 'stdio:', '', 'tcp'])(
    'parse_listen_url_rejects_unsupported_url %j',
    (url) => {
      expect(() => parseListenUrl(url)).toThrow(
        `unsupported --listen URL \`${url}\`; expected \`ws://IP:PORT\` or \`stdio\``,
      );
    },
  );

  test('bound URLs print like a Rust SocketAddr', () => {
    expect(formatWebSocketUrl('127.0.0.1', 80)).toBe('ws://127.0.0.1:80');
    expect(formatWebSocketUrl('::1', 80)).toBe('ws://[::1]:80');
  });

  test('loopback detection', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1'])
      expect(isLoopbackAddress(host)).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '::ffff:10.0.0.1', '128.0.0.1'])
      expect(isLoopbackAddress(host)).toBe(false);
  });
});
