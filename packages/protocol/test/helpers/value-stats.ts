/** Shape statistics of a decoded value, to check that a decoder kept within its limits. */
export interface ValueStats {
  /** Values as the codecs count them: root, elements, map values (not keys). */
  values: number;
  /** Deepest container nesting (the root container counts as 1; a scalar root is 0). */
  depth: number;
  /** Longest string value, in UTF-16 units. */
  longestString: number;
  /** Longest byte field. */
  longestBin: number;
}

/** Walks a decoded value (iteratively, so a deep value cannot overflow the stack). */
export function valueStats(root: unknown): ValueStats {
  const stats: ValueStats = { values: 0, depth: 0, longestString: 0, longestBin: 0 };
  const stack: [unknown, number][] = [[root, 0]];
  while (stack.length > 0) {
    const [value, parentDepth] = stack.pop()!;
    stats.values++;
    if (typeof value === 'string') stats.longestString = Math.max(stats.longestString, value.length);
    else if (value instanceof Uint8Array) stats.longestBin = Math.max(stats.longestBin, value.byteLength);
    else if (value !== null && typeof value === 'object') {
      const depth = parentDepth + 1;
      stats.depth = Math.max(stats.depth, depth);
      for (const child of Array.isArray(value) ? value : Object.values(value)) stack.push([child, depth]);
    }
  }
  return stats;
}
