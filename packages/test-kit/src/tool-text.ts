/** The fields of a tool-result text (the original's test regex, spec §4.7). */
export interface ParsedToolText {
  chunkId: string | undefined;
  wallTimeSeconds: number;
  exitCode: number | undefined;
  sessionId: number | undefined;
  originalTokenCount: number | undefined;
  output: string;
}

const PATTERN =
  /^(?:Chunk ID: ([^\n]+)\n)?Wall time: (-?\d+(?:\.\d+)?) seconds\n(?:Process exited with code (-?\d+)\n)?(?:Process running with session ID (-?\d+)\n)?(?:Original token count: (\d+)\n)?Output:\n?([\s\S]*)$/;

/** Parses a tool-result text; throws when it does not have the shape. */
export function parseToolText(text: string): ParsedToolText {
  const match = PATTERN.exec(text);
  if (match === null) throw new Error(`not a tool-result text: ${JSON.stringify(text.slice(0, 300))}`);
  const number = (value: string | undefined): number | undefined =>
    value === undefined ? undefined : Number(value);
  return {
    chunkId: match[1],
    wallTimeSeconds: Number(match[2]),
    exitCode: number(match[3]),
    sessionId: number(match[4]),
    originalTokenCount: number(match[5]),
    output: match[6] ?? '',
  };
}
