import * as v from 'valibot';
import { opt, PathUri, UInt } from './common.ts';

/** A path of TOML keys, outermost first (`["mcp_servers", "x"]`); the server rejects `[]`. */
export const TomlPath = v.array(v.string());
export type TomlPath = v.InferOutput<typeof TomlPath>;

/** `environmentConfig/read` params: which parts of the executor's config files to return. */
export const EnvironmentConfigReadParams = v.object({
  /** The directory whose project config applies (`.codex/config.toml` from it up to its project root). */
  cwd: PathUri,
  /** Subtrees of `config.toml` to return; a layer with none of them is left out. */
  configPaths: v.array(TomlPath),
  /** Subtrees of `requirements.toml` to return. */
  requirementsPaths: v.array(TomlPath),
});
export type EnvironmentConfigReadParams = v.InferOutput<typeof EnvironmentConfigReadParams>;

/** One config file as the executor read it, cut down to the requested subtrees. */
export const EnvironmentConfigLayer = v.object({
  /** Where it came from, for people: `user (/root/.codex/config.toml)`, `project (…/.codex/config.toml)`. */
  source: v.string(),
  /** The folder its relative paths are relative to, as a `file://` URI. */
  baseDir: PathUri,
  /** The selected subtrees, serialized as a TOML document. */
  toml: v.string(),
});
export type EnvironmentConfigLayer = v.InferOutput<typeof EnvironmentConfigLayer>;

/** Layers from lowest to highest precedence. */
export const EnvironmentConfigLayerStack = v.object({
  layers: v.array(EnvironmentConfigLayer),
  /** Where the client inserts cloud-provided layers (after the system layer when it is present). */
  cloudInsertionIndex: UInt,
});
export type EnvironmentConfigLayerStack = v.InferOutput<typeof EnvironmentConfigLayerStack>;

/** `environmentConfig/read` result. */
export const EnvironmentConfigReadResponse = v.object({
  /** The executor user's home directory, when known. */
  userHomeDir: opt(PathUri),
  /** `$CODEX_HOME`, else `~/.codex`. */
  codexHomeDir: PathUri,
  /** The executor host's name. */
  hostname: v.string(),
  config: EnvironmentConfigLayerStack,
  requirements: EnvironmentConfigLayerStack,
});
export type EnvironmentConfigReadResponse = v.InferOutput<typeof EnvironmentConfigReadResponse>;
