// The executor-local config layers of `environmentConfig/read`, as the original's
// `load_local_config_layers`: system, user, trusted project layers and the legacy managed file for
// `config.toml`; the system file for `requirements.toml`. Cloud layers, profiles and session
// flags are the client's business.
import { access } from 'node:fs/promises';
import { dirname, join, parse as parsePath, resolve } from 'node:path';
import { readTomlFile } from './toml-file.ts';
import { isTomlTable, type TomlTable, type TomlValue } from './toml-serialize.ts';

/** The file name of every config layer. */
export const CONFIG_TOML_FILE = 'config.toml';
/** Where the system-wide layers live on Linux and macOS (the original's `/etc/codex`). */
export const SYSTEM_CONFIG_DIR = '/etc/codex';
/** Markers of a project root when the config names none (the original's default). */
const DEFAULT_PROJECT_ROOT_MARKERS: readonly string[] = ['.git'];

/** One config file's contents and where it came from. */
export interface LocalLayer {
  /** For people: `user (/root/.codex/config.toml)`. */
  readonly source: string;
  /** The folder its relative paths are relative to. */
  readonly baseDir: string;
  readonly toml: TomlTable;
}

/** Layers from lowest to highest precedence, and where cloud layers go among them. */
export interface LocalLayerStack {
  readonly layers: readonly LocalLayer[];
  readonly cloudInsertionIndex: number;
}

/** Inputs of {@link loadLocalLayers}. */
export interface LocalLayersOptions {
  readonly codexHome: string;
  /** The folder whose project layers apply (absolute). */
  readonly cwd: string;
  /** Default {@link SYSTEM_CONFIG_DIR}; tests point it at a scratch folder. */
  readonly systemConfigDir?: string | undefined;
}

/** Deep merge of `overlay` into `base` (tables merge, anything else replaces), as `merge_toml_values`. */
function mergeInto(base: TomlTable, overlay: TomlTable): void {
  for (const key of Object.keys(overlay)) {
    const next = overlay[key] as TomlValue;
    const current = base[key];
    if (isTomlTable(current) && isTomlTable(next)) mergeInto(current, next);
    else base[key] = isTomlTable(next) ? structuredClone(next) : next;
  }
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** `cwd` and each of its ancestors, innermost first. */
function ancestors(cwd: string): string[] {
  const out: string[] = [];
  let dir = resolve(cwd);
  for (;;) {
    out.push(dir);
    if (dir === parsePath(dir).root) return out;
    dir = dirname(dir);
  }
}

/** The nearest folder (from `cwd` up) holding one of `markers`; `cwd` when none does. */
async function findProjectRoot(cwd: string, markers: readonly string[]): Promise<string> {
  if (markers.length === 0) return resolve(cwd);
  for (const dir of ancestors(cwd)) {
    const found = await Promise.all(markers.map((marker) => exists(join(dir, marker))));
    if (found.some(Boolean)) return dir;
  }
  return resolve(cwd);
}

function projectRootMarkers(config: TomlTable): readonly string[] {
  const markers = config.project_root_markers;
  if (!Array.isArray(markers)) return DEFAULT_PROJECT_ROOT_MARKERS;
  return markers.filter((marker): marker is string => typeof marker === 'string');
}

/** The `trust_level` the config gives `dir` under `[projects."<dir>"]`, if any. */
function trustLevel(config: TomlTable, dir: string): string | undefined {
  const projects = config.projects;
  if (!isTomlTable(projects)) return undefined;
  const entry = projects[dir];
  return isTomlTable(entry) && typeof entry.trust_level === 'string' ? entry.trust_level : undefined;
}

/**
 * The trusted `.codex/config.toml` layers from the project root down to `cwd`. A folder's layer
 * is used when that folder, or else the project root, is trusted (live 0.169.0: a trusted
 * folder between them does not vouch for the folders below it). Untrusted files are not read.
 */
async function projectLayers(config: TomlTable, cwd: string, codexHome: string): Promise<LocalLayer[]> {
  const root = await findProjectRoot(cwd, projectRootMarkers(config));
  const dirs = ancestors(cwd);
  const rootIndex = dirs.indexOf(root);
  const chain = (rootIndex < 0 ? [resolve(cwd)] : dirs.slice(0, rootIndex + 1)).reverse();
  const rootTrust = trustLevel(config, root);
  const layers: LocalLayer[] = [];
  for (const dir of chain) {
    const dotCodex = join(dir, '.codex');
    if (dotCodex === resolve(codexHome)) continue;
    if ((trustLevel(config, dir) ?? rootTrust) !== 'trusted') continue;
    const file = join(dotCodex, CONFIG_TOML_FILE);
    const toml = await readTomlFile(file, 'project');
    if (toml !== undefined) layers.push({ source: `project (${file})`, baseDir: dotCodex, toml });
  }
  return layers;
}

/** Loads every executor-local layer; throws `ConfigFileError` for a file that cannot be parsed. */
export async function loadLocalLayers(
  options: LocalLayersOptions,
): Promise<{ config: LocalLayerStack; requirements: LocalLayerStack }> {
  const systemDir = options.systemConfigDir ?? SYSTEM_CONFIG_DIR;
  const systemFile = join(systemDir, CONFIG_TOML_FILE);
  const userFile = join(options.codexHome, CONFIG_TOML_FILE);
  const managedFile = join(systemDir, 'managed_config.toml');
  const requirementsFile = join(systemDir, 'requirements.toml');
  const [system, user, managed, requirements] = await Promise.all([
    readTomlFile(systemFile, 'location'),
    readTomlFile(userFile, 'location'),
    readTomlFile(managedFile, 'location'),
    readTomlFile(requirementsFile, 'location'),
  ]);
  // The project boundary and trust come from system, user and managed values together.
  const discovery: TomlTable = {};
  for (const table of [system, user, managed]) if (table) mergeInto(discovery, table);
  const project = await projectLayers(discovery, options.cwd, options.codexHome);

  const configLayers: LocalLayer[] = [
    { source: `system (${systemFile})`, baseDir: systemDir, toml: system ?? {} },
    { source: `user (${userFile})`, baseDir: options.codexHome, toml: user ?? {} },
    ...project,
  ];
  if (managed !== undefined) {
    configLayers.push({
      source: `legacy managed_config.toml (${managedFile})`,
      baseDir: systemDir,
      toml: managed,
    });
  }
  return {
    // Cloud config goes right after the system layer.
    config: { layers: configLayers, cloudInsertionIndex: 1 },
    requirements: {
      layers:
        requirements === undefined
          ? []
          : [{ source: requirementsFile, baseDir: systemDir, toml: requirements }],
      cloudInsertionIndex: requirements === undefined ? 0 : 1,
    },
  };
}
