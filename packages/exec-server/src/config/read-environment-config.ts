import { homedir, hostname } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import {
  type EnvironmentConfigLayerStack,
  type EnvironmentConfigReadParams,
  type EnvironmentConfigReadResponse,
  fileUriToPath,
  pathToFileUri,
  RpcError,
} from '@execd/protocol';
import { type LocalLayerStack, loadLocalLayers } from './local-layers.ts';
import { ConfigFileError } from './toml-file.ts';
import { projectToml, selectorTree } from './toml-projection.ts';
import { stringifyToml } from './toml-serialize.ts';

/** Inputs of {@link readEnvironmentConfig} besides the params. */
export interface EnvironmentConfigOptions {
  /** The executor's own environment (`CODEX_HOME`, `HOME`); default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Default `/etc/codex`. */
  readonly systemConfigDir?: string | undefined;
}

function validatePaths(params: EnvironmentConfigReadParams): void {
  if (params.configPaths.length === 0 && params.requirementsPaths.length === 0) {
    throw new RpcError('invalidParams', 'at least one config or requirements path is required');
  }
  if ([...params.configPaths, ...params.requirementsPaths].some((path) => path.length === 0)) {
    throw new RpcError('invalidParams', 'TOML paths must contain at least one key segment');
  }
}

function homeDir(env: Readonly<Record<string, string | undefined>>): string | undefined {
  if (env.HOME && isAbsolute(env.HOME)) return env.HOME;
  try {
    return homedir() || undefined;
  } catch {
    return undefined;
  }
}

/** `$CODEX_HOME` (made absolute), else `~/.codex`, as the original's `find_codex_home`. */
function codexHome(env: Readonly<Record<string, string | undefined>>): string {
  if (env.CODEX_HOME) return resolve(env.CODEX_HOME);
  const home = homeDir(env);
  if (home === undefined) {
    throw new RpcError('internal', 'failed to find Codex home: failed to locate home directory');
  }
  return join(home, '.codex');
}

function project(stack: LocalLayerStack, paths: readonly (readonly string[])[]): EnvironmentConfigLayerStack {
  const selector = selectorTree(paths);
  const layers: EnvironmentConfigLayerStack['layers'] = [];
  let cloudInsertionIndex = 0;
  stack.layers.forEach((layer, index) => {
    const toml = projectToml(layer.toml, selector);
    if (toml === undefined) return;
    if (index < stack.cloudInsertionIndex) cloudInsertionIndex += 1;
    layers.push({ source: layer.source, baseDir: pathToFileUri(layer.baseDir), toml: stringifyToml(toml) });
  });
  return { layers, cloudInsertionIndex };
}

/**
 * `environmentConfig/read`: the executor's own config layers (system, user, trusted project,
 * legacy managed) and requirements, cut down to the requested key paths; layers with none of them
 * are left out. Bad selectors and a bad `cwd` are -32602; a config file that cannot be read or
 * parsed is -32603 `failed to load executor-local config: …` naming the file, as the original.
 */
export async function readEnvironmentConfig(
  params: EnvironmentConfigReadParams,
  options: EnvironmentConfigOptions = {},
): Promise<EnvironmentConfigReadResponse> {
  validatePaths(params);
  let cwd: string;
  try {
    cwd = fileUriToPath(params.cwd);
  } catch (error) {
    // The original's URL parser's words for a path without a scheme, execd's for the rest.
    const reason = /^[A-Za-z][A-Za-z0-9+.-]*:/.test(params.cwd)
      ? (error as Error).message
      : 'relative URL without a base';
    throw new RpcError('invalidParams', `invalid URI: ${reason}`, { cause: error });
  }
  const env = options.env ?? process.env;
  const home = codexHome(env);
  let loaded: Awaited<ReturnType<typeof loadLocalLayers>>;
  try {
    loaded = await loadLocalLayers({ codexHome: home, cwd, systemConfigDir: options.systemConfigDir });
  } catch (error) {
    if (!(error instanceof ConfigFileError)) throw error;
    throw new RpcError('internal', `failed to load executor-local config: ${error.message}`, {
      cause: error,
    });
  }
  const userHome = homeDir(env);
  return {
    userHomeDir: userHome === undefined ? undefined : pathToFileUri(userHome),
    codexHomeDir: pathToFileUri(home),
    hostname: hostname(),
    config: project(loaded.config, params.configPaths),
    requirements: project(loaded.requirements, params.requirementsPaths),
  };
}
