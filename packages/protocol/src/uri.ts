// file:// URIs without Node's `url` module (this package has no Node APIs).

/** Converts an absolute POSIX path into a `file://` URI (percent-encoding what must be). */
export function pathToFileUri(path: string): string {
  if (!path.startsWith('/')) throw new TypeError(`path must be absolute: ${path}`);
  const encoded = path
    .split('/')
    .map((segment) =>
      encodeURIComponent(segment).replace(/%2B/g, '+').replace(/%40/g, '@').replace(/%3A/g, ':'),
    )
    .join('/');
  return `file://${encoded}`;
}

/**
 * Converts a `file://` URI with an empty or `localhost` authority back into an absolute path.
 * Throws TypeError naming what is wrong (not a URI, another scheme, a remote host, a NUL byte).
 */
export function fileUriToPath(uri: string): string {
  if (!uri.startsWith('file:')) {
    throw new TypeError(
      uri.startsWith('/') ? 'expected a file:// URI, got a native path' : 'expected a file:// URI',
    );
  }
  let rest = uri.slice('file:'.length);
  if (rest.startsWith('//')) {
    rest = rest.slice(2);
    const slash = rest.indexOf('/');
    const host = slash < 0 ? rest : rest.slice(0, slash);
    if (host !== '' && host.toLowerCase() !== 'localhost')
      throw new TypeError(`file URI names a remote host \`${host}\``);
    rest = slash < 0 ? '/' : rest.slice(slash);
  }
  if (!rest.startsWith('/')) throw new TypeError('file URI path must be absolute');
  const hash = rest.search(/[?#]/);
  if (hash >= 0) rest = rest.slice(0, hash);
  let path: string;
  try {
    path = decodeURIComponent(rest);
  } catch {
    throw new TypeError('file URI has invalid percent-encoding');
  }
  if (path.includes('\0')) throw new TypeError('file URI contains a NUL byte');
  return path;
}
