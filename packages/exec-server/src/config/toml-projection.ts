import { isTomlTable, type TomlTable, type TomlValue } from './toml-serialize.ts';

/** The requested key paths as a tree: a `terminal` node selects everything below it. */
interface SelectorNode {
  terminal: boolean;
  readonly children: Map<string, SelectorNode>;
}

function newNode(): SelectorNode {
  return { terminal: false, children: new Map() };
}

/** Builds the selector tree of `paths`; a path that is a prefix of another selects the whole subtree. */
export function selectorTree(paths: readonly (readonly string[])[]): SelectorNode {
  const root = newNode();
  for (const path of paths) {
    let node = root;
    for (const segment of path) {
      if (node.terminal) break;
      let child = node.children.get(segment);
      if (child === undefined) {
        child = newNode();
        node.children.set(segment, child);
      }
      node = child;
    }
    node.terminal = true;
    node.children.clear();
  }
  return root;
}

function projectValue(value: TomlValue, selector: SelectorNode): TomlValue {
  if (selector.terminal) return value;
  // A non-table where a table was selected is kept whole: it still overrides lower layers.
  if (!isTomlTable(value)) return value;
  const projected: TomlTable = {};
  for (const key of Object.keys(value)) {
    const child = selector.children.get(key);
    if (child !== undefined) projected[key] = projectValue(value[key] as TomlValue, child);
  }
  return projected;
}

/**
 * The parts of `table` the selectors name, keeping the file's key order; `undefined` when
 * nothing was selected (the layer is then left out, as the original's `project_toml`). A selected
 * table that exists without the selected keys stays as an empty table.
 */
export function projectToml(table: TomlTable, selector: SelectorNode): TomlTable | undefined {
  const projected = projectValue(table, selector) as TomlTable;
  if (!selector.terminal && Object.keys(projected).length === 0) return undefined;
  return projected;
}
