// `capabilityRoots/discoverV1` as Codex 0.169.0's exec-server answers it: a bounded scan of each
// root for skills (`SKILL.md` and its `agents/openai.yaml`) and plugin manifests, and the files
// they name, read as UTF-8 text. Parsing and policy stay with the client.
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import {
  type CapabilityRootDiscoverRequest,
  type CapabilityRootDiscovery,
  type CapabilityRootsDiscoverParams,
  type CapabilityRootsDiscoverResponse,
  type CapabilityTextFile,
  fileUriToPath,
  pathToFileUri,
  RpcError,
} from '@execd/protocol';
import { ioErrorText, scanTree } from './scan-tree.ts';

/** Roots one request may name (the original's `MAX_ROOTS_PER_REQUEST`). */
export const MAX_ROOTS_PER_REQUEST = 128;
/** Roots scanned at once. */
const MAX_CONCURRENT_ROOTS = 8;
/** The original's scan limits per root: 6 levels, 2 000 folders, 20 000 entries. */
const SCAN_LIMITS = { maxDepth: 6, maxDirectories: 2_000, maxEntries: 20_000 } as const;
/** Largest file returned (1 MiB) and largest total per root (16 MiB), as the original. */
const MAX_FILE_BYTES = 1024 * 1024;
const MAX_BUNDLE_BYTES_PER_ROOT = 16 * 1024 * 1024;
/** Plugin manifests, in the order the original prefers them. */
const PLUGIN_MANIFEST_PATHS = [
  '.codex-plugin/plugin.json',
  '.claude-plugin/plugin.json',
  '.cursor-plugin/plugin.json',
];
const MANIFEST_DIRS = PLUGIN_MANIFEST_PATHS.map((path) => path.split('/')[0]);

interface RootScan {
  readonly warnings: string[];
  budget: number;
}

function parsePath(uri: string): string {
  try {
    return fileUriToPath(uri);
  } catch (error) {
    const reason = /^[A-Za-z][A-Za-z0-9+.-]*:/.test(uri)
      ? (error as Error).message
      : 'relative URL without a base';
    throw new RpcError('invalidParams', `invalid URI: ${reason}`, { cause: error });
  }
}

/** Length of the UTF-8 sequence a lead byte starts (0: not a lead byte). */
function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/**
 * Why `bytes` is not UTF-8, in Rust's words (`invalid utf-8 sequence of 1 bytes from index 0`,
 * `incomplete utf-8 byte sequence from index 5`); undefined when it is.
 */
export function utf8Error(bytes: Uint8Array): string | undefined {
  for (let i = 0; i < bytes.length; ) {
    const want = sequenceLength(bytes[i] as number);
    if (want === 0) return `invalid utf-8 sequence of 1 bytes from index ${i}`;
    let good = 1;
    while (good < want && i + good < bytes.length) {
      const byte = bytes[i + good] as number;
      const lead = bytes[i] as number;
      // The second byte's range depends on the lead (no overlongs, surrogates or > U+10FFFF).
      const [low, high] =
        good === 1 && lead === 0xe0
          ? [0xa0, 0xbf]
          : good === 1 && lead === 0xed
            ? [0x80, 0x9f]
            : good === 1 && lead === 0xf0
              ? [0x90, 0xbf]
              : good === 1 && lead === 0xf4
                ? [0x80, 0x8f]
                : [0x80, 0xbf];
      if (byte < low || byte > high) break;
      good++;
    }
    if (good === want) {
      i += want;
      continue;
    }
    if (i + good === bytes.length) return `incomplete utf-8 byte sequence from index ${i}`;
    return `invalid utf-8 sequence of ${good} bytes from index ${i}`;
  }
  return undefined;
}

/** A file as text when it is a readable regular UTF-8 file within the limits; warns otherwise. */
async function readTextFile(path: string, scan: RootScan): Promise<CapabilityTextFile | undefined> {
  const uri = pathToFileUri(path);
  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) return undefined;
    size = info.size;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    scan.warnings.push(`failed to inspect capability file ${uri}: ${ioErrorText(error)}`);
    return undefined;
  }
  if (size > MAX_FILE_BYTES) {
    scan.warnings.push(`capability file ${uri} exceeds the ${MAX_FILE_BYTES}-byte limit`);
    return undefined;
  }
  if (scan.budget + size > MAX_BUNDLE_BYTES_PER_ROOT) {
    scan.warnings.push(`capability root bundle exceeds the ${MAX_BUNDLE_BYTES_PER_ROOT}-byte limit`);
    return undefined;
  }
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    scan.warnings.push(`failed to read capability file ${uri}: ${ioErrorText(error)}`);
    return undefined;
  }
  if (bytes.byteLength > MAX_FILE_BYTES || scan.budget + bytes.byteLength > MAX_BUNDLE_BYTES_PER_ROOT) {
    scan.warnings.push(`capability file ${uri} exceeded its read limit`);
    return undefined;
  }
  const invalid = utf8Error(bytes);
  if (invalid !== undefined) {
    scan.warnings.push(`capability file ${uri} is not UTF-8: ${invalid}`);
    return undefined;
  }
  const contents = bytes.toString('utf8');
  scan.budget += bytes.byteLength;
  return { path: uri, contents };
}

async function firstPluginManifest(dir: string, scan: RootScan): Promise<CapabilityTextFile | undefined> {
  for (const manifest of PLUGIN_MANIFEST_PATHS) {
    const found = await readTextFile(join(dir, manifest), scan);
    if (found) return found;
  }
  return undefined;
}

/** A file a manifest declares (`"./path"`, below the root), or undefined with a warning. */
function declaredPath(
  root: string,
  field: string,
  value: unknown,
  manifest: string,
  scan: RootScan,
): string | undefined {
  if (typeof value !== 'string') return undefined;
  if (!value.startsWith('./')) {
    scan.warnings.push(`ignoring ${field} in ${manifest}: path must start with \`./\``);
    return undefined;
  }
  const rest = value.slice(2);
  const target = resolve(root, rest);
  if (rest === '' || rest.split(/[/\\]/).includes('..') || relative(root, target).startsWith('..')) {
    scan.warnings.push(`ignoring ${field} in ${manifest}: path must remain below the capability root`);
    return undefined;
  }
  return target;
}

async function pluginFiles(
  root: string,
  manifest: CapabilityTextFile,
  scan: RootScan,
): Promise<CapabilityRootDiscovery['plugin']> {
  let declared: { mcpServers?: unknown; apps?: unknown } = {};
  try {
    const parsed: unknown = JSON.parse(manifest.contents);
    if (typeof parsed === 'object' && parsed !== null) declared = parsed as typeof declared;
  } catch {}
  const inline =
    typeof declared.mcpServers === 'object' &&
    declared.mcpServers !== null &&
    !Array.isArray(declared.mcpServers);
  const mcpPath = inline
    ? undefined
    : (declaredPath(root, 'mcpServers', declared.mcpServers, manifest.path, scan) ?? join(root, '.mcp.json'));
  const appsPath = declaredPath(root, 'apps', declared.apps, manifest.path, scan);
  return {
    manifest,
    mcpConfig: (mcpPath && (await readTextFile(mcpPath, scan))) || null,
    appsConfig: (appsPath && (await readTextFile(appsPath, scan))) || null,
  };
}

async function discoverRoot(
  request: CapabilityRootDiscoverRequest,
  root: string,
): Promise<CapabilityRootDiscovery> {
  const discovery: CapabilityRootDiscovery = {
    id: request.id,
    path: request.path,
    plugin: null,
    skills: [],
    namespaceManifests: [],
    warnings: [],
    error: null,
  };
  // execd cannot scan under a sandbox (capabilityDiscoverySandbox is false): refuse, never read more.
  if (request.sandbox !== undefined && request.sandbox !== null) {
    return { ...discovery, error: 'filesystem sandbox is unavailable on this executor' };
  }
  try {
    if (!(await stat(root)).isDirectory()) {
      return { ...discovery, error: `capability root ${request.path} is not a directory` };
    }
  } catch (error) {
    return {
      ...discovery,
      error: `failed to inspect capability root ${request.path}: ${ioErrorText(error)}`,
    };
  }
  const scan: RootScan = { warnings: discovery.warnings, budget: 0 };
  const tree = await scanTree(root, SCAN_LIMITS);
  for (const failure of tree.errors) {
    scan.warnings.push(`failed to scan capability path ${pathToFileUri(failure.path)}: ${failure.message}`);
  }
  if (tree.truncated)
    scan.warnings.push(`capability scan reached its traversal limit (root: ${request.path})`);
  const skillPaths = tree.files.filter((file) => basename(file) === 'SKILL.md');
  skillPaths.sort((a, b) => (pathToFileUri(a) < pathToFileUri(b) ? -1 : 1));
  const priority = (file: string): number => MANIFEST_DIRS.indexOf(basename(dirname(file)));
  const manifestPaths = tree.files.filter((file) => basename(file) === 'plugin.json' && priority(file) >= 0);
  manifestPaths.sort(
    (a, b) => dirname(dirname(a)).localeCompare(dirname(dirname(b))) || priority(a) - priority(b),
  );

  const rootManifest = await firstPluginManifest(root, scan);
  let inherited = rootManifest;
  for (let dir = dirname(root); inherited === undefined; dir = dirname(dir)) {
    inherited = await firstPluginManifest(dir, scan);
    if (dir === dirname(dir)) break;
  }
  const seenPluginRoots = new Set<string>();
  if (inherited) {
    seenPluginRoots.add(dirname(dirname(fileUriToPath(inherited.path))));
    discovery.namespaceManifests.push(inherited);
  }
  for (const manifestPath of manifestPaths) {
    const pluginRoot = dirname(dirname(manifestPath));
    if (seenPluginRoots.has(pluginRoot)) continue;
    seenPluginRoots.add(pluginRoot);
    const manifest = await readTextFile(manifestPath, scan);
    if (manifest) discovery.namespaceManifests.push(manifest);
  }
  if (rootManifest) discovery.plugin = await pluginFiles(root, rootManifest, scan);
  for (const skillPath of skillPaths) {
    const instructions = await readTextFile(skillPath, scan);
    if (!instructions) continue;
    const metadata = await readTextFile(join(dirname(skillPath), 'agents', 'openai.yaml'), scan);
    discovery.skills.push({ instructions, metadata: metadata ?? null });
  }
  return discovery;
}

/**
 * `capabilityRoots/discoverV1`: scans each root (at most {@link MAX_ROOTS_PER_REQUEST}, 8 at a
 * time) and answers one entry per root, in order. A root that cannot be scanned carries `error`;
 * a bad URI fails the whole request with -32602, as the original.
 */
export async function discoverCapabilityRoots(
  params: CapabilityRootsDiscoverParams,
): Promise<CapabilityRootsDiscoverResponse> {
  if (params.roots.length > MAX_ROOTS_PER_REQUEST) {
    throw new RpcError(
      'invalidParams',
      `capability root discovery accepts at most ${MAX_ROOTS_PER_REQUEST} roots`,
    );
  }
  const paths = params.roots.map((root) => parsePath(root.path));
  const roots: CapabilityRootDiscovery[] = [];
  for (let start = 0; start < params.roots.length; start += MAX_CONCURRENT_ROOTS) {
    const batch = params.roots.slice(start, start + MAX_CONCURRENT_ROOTS);
    roots.push(
      ...(await Promise.all(batch.map((root, i) => discoverRoot(root, paths[start + i] as string)))),
    );
  }
  return { roots };
}
