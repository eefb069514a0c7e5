// Expected texts are what Codex 0.169.0's exec-server returned for the same files (live probes).
import { parse } from 'smol-toml';
import { describe, expect, test } from 'vitest';
import { projectToml, selectorTree } from './toml-projection.ts';
import { stringifyToml, type TomlTable } from './toml-serialize.ts';

const USER_CONFIG = `model = "x"
[mcp_servers.x]
command = "echo"
args = ["a", "b"]
env = { A = "1" }
[mcp_servers.y]
url = "http://localhost:1/mcp"
startup_timeout_sec = 5.5
[projects."/tmp/h3/cfg/proj"]
trust_level = "trusted"
`;

function toml(text: string): TomlTable {
  return parse(text, { integersAsBigInt: true }) as TomlTable;
}

function projected(text: string, paths: string[][]): string | undefined {
  const table = projectToml(toml(text), selectorTree(paths));
  return table === undefined ? undefined : stringifyToml(table);
}

describe('environmentConfig/read layer text', () => {
  test('a selected subtree: implicit parents, inline tables as sections, blank lines between', () => {
    expect(projected(USER_CONFIG, [['mcp_servers']])).toBe(
      '[mcp_servers.x]\ncommand = "echo"\nargs = ["a", "b"]\n\n[mcp_servers.x.env]\nA = "1"\n\n' +
        '[mcp_servers.y]\nurl = "http://localhost:1/mcp"\nstartup_timeout_sec = 5.5\n',
    );
  });

  test('several selectors keep file order; top-level values come first', () => {
    expect(projected(USER_CONFIG, [['mcp_servers', 'x', 'args'], ['model'], ['nope']])).toBe(
      'model = "x"\n\n[mcp_servers.x]\nargs = ["a", "b"]\n',
    );
  });

  test('a selected table without the selected key stays as an empty section', () => {
    expect(
      projected('[mcp_servers.p]\ncommand = "pp"\n[other]\nz = 1\n', [['mcp_servers', 'x', 'args']]),
    ).toBe('[mcp_servers]\n');
  });

  test('a layer with none of the selected keys is left out', () => {
    expect(projected('[other]\nz = 1\n', [['mcp_servers']])).toBeUndefined();
  });

  test('keys that are not bare are quoted', () => {
    expect(projected(USER_CONFIG, [['projects']])).toBe(
      '[projects."/tmp/h3/cfg/proj"]\ntrust_level = "trusted"\n',
    );
  });

  test('a shorter selector wins over a longer one on the same path', () => {
    expect(
      projected(USER_CONFIG, [
        ['mcp_servers', 'y', 'url'],
        ['mcp_servers', 'y'],
      ]),
    ).toBe('[mcp_servers.y]\nurl = "http://localhost:1/mcp"\nstartup_timeout_sec = 5.5\n');
  });

  test('a non-table where a table was selected is kept whole', () => {
    expect(projected('mcp_servers = 3\n', [['mcp_servers', 'x']])).toBe('mcp_servers = 3\n');
  });
});

describe('stringifyToml', () => {
  test('scalars: integers, floats, booleans, dates, strings that need escapes or are literal', () => {
    const text = stringifyToml(
      toml(
        'i = 7\nf = 2.0\nb = true\nd = 1979-05-27T07:32:00Z\ns = "tab\\there \\"q\\""\nw = \'C:\\dir\'\nn = "a\\nb"\n',
      ),
    );
    expect(text).toBe(
      'i = 7\nf = 2.0\nb = true\nd = 1979-05-27T07:32:00.000Z\ns = "tab\\there \\"q\\""\nw = \'C:\\dir\'\nn = """\na\nb"""\n',
    );
    expect(toml(text)).toEqual(toml(text.replace('.000Z', 'Z')));
  });

  test('arrays of tables become [[sections]]; tables in mixed arrays stay inline', () => {
    const source = '[[servers]]\nname = "a"\n[[servers]]\nname = "b"\nopts = [{ k = 1 }, 2]\n';
    const text = stringifyToml(toml(source));
    expect(text).toBe('[[servers]]\nname = "a"\n\n[[servers]]\nname = "b"\nopts = [{ k = 1 }, 2]\n');
    expect(toml(text)).toEqual(toml(source));
  });

  test('round-trips what it writes', () => {
    expect(toml(stringifyToml(toml(USER_CONFIG)))).toEqual(toml(USER_CONFIG));
  });
});
