/** The exit code a tool-result text reports (`Process exited with code N`), if any. */
export function parseToolResultExitCode(text: string): number | undefined {
  const match = /^Process exited with code (-?\d+)$/m.exec(text);
  if (match === null) return undefined;
  const code = Number(match[1]);
  // Shell exit statuses are 0..255; -1 (unknown) and others map to a generic failure.
  return code >= 0 && code <= 255 ? code : 1;
}
