import { describe, expect, test } from 'vitest';
import { fileUriToPath, pathToFileUri } from './uri.ts';

describe('pathToFileUri / fileUriToPath', () => {
  test.each([
    ['/', 'file:///'],
    ['/tmp', 'file:///tmp'],
    ['/tmp/a b', 'file:///tmp/a%20b'],
    ['/tmp/100%', 'file:///tmp/100%25'],
    ['/tmp/a#b?c', 'file:///tmp/a%23b%3Fc'],
    ['/home/u/x+y@z:1', 'file:///home/u/x+y@z:1'],
    ['/tmp/é', 'file:///tmp/%C3%A9'],
  ])('%j <-> %j', (path, uri) => {
    expect(pathToFileUri(path)).toBe(uri);
    expect(fileUriToPath(uri)).toBe(path);
  });

  test('accepts the localhost authority, the short form, and drops query and fragment', () => {
    expect(fileUriToPath('file://localhost/tmp')).toBe('/tmp');
    expect(fileUriToPath('file:/tmp')).toBe('/tmp');
    expect(fileUriToPath('file:///tmp/x?y#z')).toBe('/tmp/x');
    expect(fileUriToPath('file://')).toBe('/');
  });

  test.each([
    ['/tmp', /native path/],
    ['http://x/tmp', /file:\/\/ URI/],
    ['file://host/tmp', /remote host/],
    ['file:tmp', /absolute/],
    ['file:///tmp/%zz', /percent-encoding/],
    ['file:///tmp/%00', /NUL/],
  ])('refuses %j', (uri, message) => {
    expect(() => fileUriToPath(uri)).toThrow(message);
  });

  test('refuses a relative path', () => {
    expect(() => pathToFileUri('tmp')).toThrow(TypeError);
  });
});
