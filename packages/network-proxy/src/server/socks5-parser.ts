import { isIP } from 'node:net';
import { expandIpv6 } from '../policy/address.ts';

/**
 * Pure SOCKS5 (RFC 1928) message parsing: feed the bytes received so far, get either a message,
 * `incomplete` (wait for more) or a protocol error. No sockets here, so it is tested byte by byte.
 */

/** SOCKS5 reply codes (RFC 1928 §6). */
export const SOCKS_REPLY = {
  succeeded: 0x00,
  generalFailure: 0x01,
  notAllowedByRuleset: 0x02,
  networkUnreachable: 0x03,
  hostUnreachable: 0x04,
  connectionRefused: 0x05,
  ttlExpired: 0x06,
  commandNotSupported: 0x07,
  addressTypeNotSupported: 0x08,
} as const;

/** The `CONNECT` command; `BIND` (2) and `UDP ASSOCIATE` (3) are refused. */
export const SOCKS_CMD_CONNECT = 0x01;
/** "No authentication required": the only method offered (the sandbox is the only client). */
export const SOCKS_METHOD_NO_AUTH = 0x00;
/** "No acceptable methods". */
export const SOCKS_METHOD_NONE = 0xff;

/** The client's greeting: the authentication methods it offers. */
export interface SocksGreeting {
  readonly methods: readonly number[];
  /** Bytes consumed. */
  readonly length: number;
}

/** A request: command, destination and the bytes consumed. */
export interface SocksRequest {
  readonly command: number;
  /** Domain name as sent (ATYP 3), or the IPv4/IPv6 literal (ATYP 1/4). */
  readonly host: string;
  readonly port: number;
  readonly length: number;
}

/** A malformed message; `reply` is the code to answer with when a reply is still possible. */
export interface SocksParseError {
  readonly error: 'version' | 'addressType' | 'malformed';
  readonly reply: number;
}

export type SocksParse<T> = T | 'incomplete' | SocksParseError;

/** True when a parse result is an error. */
export function isSocksError<T extends object>(value: SocksParse<T>): value is SocksParseError {
  return typeof value === 'object' && 'error' in value;
}

/** Parses `VER NMETHODS METHODS...`. */
export function parseSocksGreeting(buf: Uint8Array): SocksParse<SocksGreeting> {
  if (buf.length < 2) return 'incomplete';
  if (buf[0] !== 0x05) return { error: 'version', reply: SOCKS_REPLY.generalFailure };
  const count = buf[1] ?? 0;
  if (count === 0) return { error: 'malformed', reply: SOCKS_REPLY.generalFailure };
  if (buf.length < 2 + count) return 'incomplete';
  return { methods: [...buf.subarray(2, 2 + count)], length: 2 + count };
}

function formatIpv6(bytes: Uint8Array): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  return groups.join(':');
}

/** Parses `VER CMD RSV ATYP DST.ADDR DST.PORT`. */
export function parseSocksRequest(buf: Uint8Array): SocksParse<SocksRequest> {
  if (buf.length < 4) return 'incomplete';
  if (buf[0] !== 0x05) return { error: 'version', reply: SOCKS_REPLY.generalFailure };
  const command = buf[1] ?? 0;
  const addressType = buf[3];
  let host: string;
  let offset: number;
  if (addressType === 0x01) {
    if (buf.length < 4 + 4 + 2) return 'incomplete';
    host = [...buf.subarray(4, 8)].join('.');
    offset = 8;
  } else if (addressType === 0x03) {
    if (buf.length < 5) return 'incomplete';
    const nameLength = buf[4] ?? 0;
    if (nameLength === 0) return { error: 'malformed', reply: SOCKS_REPLY.generalFailure };
    if (buf.length < 5 + nameLength + 2) return 'incomplete';
    host = Buffer.from(buf.subarray(5, 5 + nameLength)).toString('latin1');
    offset = 5 + nameLength;
  } else if (addressType === 0x04) {
    if (buf.length < 4 + 16 + 2) return 'incomplete';
    host = formatIpv6(buf.subarray(4, 20));
    offset = 20;
  } else {
    return { error: 'addressType', reply: SOCKS_REPLY.addressTypeNotSupported };
  }
  const port = ((buf[offset] ?? 0) << 8) | (buf[offset + 1] ?? 0);
  return { command, host, port, length: offset + 2 };
}

/** Encodes a reply with the bound address (`0.0.0.0:0` when unknown or after a failure). */
export function socksReply(
  code: number,
  bound?: { readonly address: string; readonly port: number },
): Buffer {
  const port = bound?.port ?? 0;
  const address = bound?.address ?? '0.0.0.0';
  if (isIP(address) === 6) {
    const out = Buffer.alloc(4 + 16 + 2);
    out.set([0x05, code, 0x00, 0x04]);
    for (const [i, group] of expandIpv6(address).entries()) out.writeUInt16BE(group, 4 + i * 2);
    out.writeUInt16BE(port, 20);
    return out;
  }
  const octets = isIP(address) === 4 ? address.split('.').map(Number) : [0, 0, 0, 0];
  const out = Buffer.alloc(4 + 4 + 2);
  out.set([0x05, code, 0x00, 0x01, ...octets]);
  out.writeUInt16BE(port, 8);
  return out;
}
