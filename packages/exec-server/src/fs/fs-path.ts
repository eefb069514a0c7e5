import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { RpcError } from '@execd/protocol';
import { refused } from './fs-errors.ts';

/**
 * Turns an `fs/*` path URI into a native absolute path, with the original's errors: -32602 for a
 * string that is not a `file:` URI (a bare path reads as `invalid URI: relative URL without a
 * base`), -32600 for a URI this host cannot name (a remote host). Dot segments are resolved and a
 * trailing slash dropped, as the original's `PathUri` does.
 */
export function pathFromUri(uri: string): string {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new RpcError('invalidParams', 'invalid URI: relative URL without a base');
  }
  const scheme = url.protocol.slice(0, -1);
  if (scheme !== 'file') throw new RpcError('invalidParams', `unsupported path URI scheme \`${scheme}\``);
  if (url.search !== '' || uri.includes('?'))
    throw new RpcError('invalidParams', 'query parameters are not allowed in path URIs');
  if (url.hash !== '' || uri.includes('#'))
    throw new RpcError('invalidParams', 'fragments are not allowed in path URIs');
  let path: string;
  try {
    path = fileURLToPath(url);
  } catch {
    throw refused(`'${uri}' is invalid on 'linux'`);
  }
  if (path.includes('\0')) throw refused('file name contained an unexpected NUL byte');
  return resolve(path);
}

/** Turns a native absolute path into the `file:` URI the original would answer with. */
export function uriFromPath(path: string): string {
  return pathToFileURL(path).href;
}

/** Checks a path given to the in-process API: absolute, no NUL byte; normalised like a URI's. */
export function checkNativePath(path: string): string {
  if (typeof path !== 'string' || !isAbsolute(path))
    throw new RpcError('invalidParams', `path must be absolute: ${String(path)}`);
  if (path.includes('\0')) throw refused('file name contained an unexpected NUL byte');
  return resolve(path);
}
