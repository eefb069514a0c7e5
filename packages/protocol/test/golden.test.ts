import { describe, expect, test } from 'vitest';
import {
  createJsonCodec,
  createMsgpackCodec,
  decodeParams,
  decodeResult,
  isMethodName,
  type RpcMessage,
} from '../src/index.ts';
import { CODEX_0_169_FRAMES, SPEC_WIRE_EXAMPLES } from './fixtures/wire-examples.ts';

const json = createJsonCodec();
const msgpack = createMsgpackCodec();

/** Decodes a frame and validates its params or result, as a peer would on receipt. */
function receive(frame: string | Uint8Array, codec = json, answers?: string): RpcMessage {
  const message = codec.decode(frame);
  switch (message.kind) {
    case 'request':
    case 'notification':
      if (!isMethodName(message.method)) throw new Error(`unknown method ${message.method}`);
      return { ...message, params: decodeParams(message.method, message.params) };
    case 'response':
      if (!answers || !isMethodName(answers)) throw new Error('a response needs the method it answers');
      return { ...message, result: decodeResult(answers, message.result) };
    case 'error':
      return message;
  }
}

describe('spec §3.4 wire examples', () => {
  test.each(SPEC_WIRE_EXAMPLES.map((example) => [example.wire, example] as const))(
    '%s decodes, validates and re-encodes to equal JSON',
    (_wire, example) => {
      const validated = receive(example.wire, json, example.answers);
      const expected = JSON.parse(example.reencoded ?? example.wire);
      expect(JSON.parse(json.encodeText(validated))).toEqual(expected);

      // The same message through msgpack and back to JSON is the same JSON.
      const viaMsgpack = receive(msgpack.encode(validated), msgpack, example.answers);
      expect(viaMsgpack).toEqual(validated);
      expect(JSON.parse(json.encodeText(viaMsgpack))).toEqual(expected);
    },
  );

  test('re-encoding keeps member order for the messages written verbatim', () => {
    for (const example of SPEC_WIRE_EXAMPLES) {
      const validated = receive(example.wire, json, example.answers);
      expect(json.encodeText(validated)).toBe(example.reencoded ?? example.wire);
    }
  });

  test('bytes arrive as Uint8Array', () => {
    const output = receive(SPEC_WIRE_EXAMPLES[5]!.wire);
    expect(output.kind === 'notification' && (output.params as { chunk: Uint8Array }).chunk).toEqual(
      new TextEncoder().encode('hi\n'),
    );
  });
});

describe('frames captured from Codex CLI 0.169', () => {
  test('an InitializeResponse carrying environmentInfo validates; unknown members are dropped', () => {
    const message = receive(CODEX_0_169_FRAMES.initializeResult, json, 'initialize');
    expect(message).toMatchObject({
      kind: 'response',
      result: {
        sessionId: '7632b397-8347-4fda-8a41-0e0d925bd9d1',
        environmentInfo: {
          shell: { name: 'bash', path: '/bin/bash' },
          cwd: 'file:///tmp/probe',
          userHomeDir: 'file:///root',
          platformOs: 'linux',
          executorVersion: '0.169.0',
          temporaryDirectories: [],
          tempDir: 'file:///tmp',
          capabilities: { networkProxyLaunch: true, shellSnapshotV2: true },
        },
      },
    });
    // Every member Codex 0.169.0 sends is known now (providerId, prependPathDirs, the capability flags).
    const info = (message as { result: { environmentInfo: Record<string, unknown> } }).result.environmentInfo;
    expect(info.providerId).toMatch(/^sha256:/);
    expect(info.capabilities).toMatchObject({ windowsMxc: false, fileWriteStreaming: true });
  });

  test('error responses decode, including the id -1 answer to an unreadable frame', () => {
    expect(receive(CODEX_0_169_FRAMES.missingEnvError)).toEqual({
      kind: 'error',
      id: 3,
      error: { code: -32602, message: 'missing field `env`' },
    });
    expect(receive(CODEX_0_169_FRAMES.parseError)).toMatchObject({
      kind: 'error',
      id: -1,
      error: { code: -32600 },
    });
  });
});
