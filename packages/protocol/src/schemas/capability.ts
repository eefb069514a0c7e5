import * as v from 'valibot';
import { orNull, PathUri } from './common.ts';

/** One root to scan for capabilities (skills, plugin manifests). */
export const CapabilityRootDiscoverRequest = v.object({
  /** Caller-chosen id, echoed in the result. */
  id: v.string(),
  /** The folder to scan, as a `file://` URI. */
  path: PathUri,
  /** The sandbox the scan must run under (the original's `FileSystemSandboxContext`), if any. */
  sandbox: v.nullish(v.unknown()),
});
export type CapabilityRootDiscoverRequest = v.InferOutput<typeof CapabilityRootDiscoverRequest>;

/** `capabilityRoots/discoverV1` params. */
export const CapabilityRootsDiscoverParams = v.object({
  roots: v.array(CapabilityRootDiscoverRequest),
});
export type CapabilityRootsDiscoverParams = v.InferOutput<typeof CapabilityRootsDiscoverParams>;

/** A UTF-8 text file the scan read. */
export const CapabilityTextFile = v.object({ path: PathUri, contents: v.string() });
export type CapabilityTextFile = v.InferOutput<typeof CapabilityTextFile>;

/** A skill: its `SKILL.md` and, when present, `agents/openai.yaml` next to it. */
export const DiscoveredSkillFiles = v.object({
  instructions: CapabilityTextFile,
  metadata: orNull(CapabilityTextFile),
});
export type DiscoveredSkillFiles = v.InferOutput<typeof DiscoveredSkillFiles>;

/** The root's own plugin: its manifest and the MCP and apps configs it points at. */
export const DiscoveredPluginFiles = v.object({
  manifest: CapabilityTextFile,
  mcpConfig: orNull(CapabilityTextFile),
  appsConfig: orNull(CapabilityTextFile),
});
export type DiscoveredPluginFiles = v.InferOutput<typeof DiscoveredPluginFiles>;

/** What one root holds; a root that could not be scanned has `error` and nothing else. */
export const CapabilityRootDiscovery = v.object({
  id: v.string(),
  path: PathUri,
  plugin: orNull(DiscoveredPluginFiles),
  /** Skills in path order. */
  skills: v.array(DiscoveredSkillFiles),
  /** Plugin manifests of the root's plugins (the nearest ancestor's first when the root has none). */
  namespaceManifests: v.array(CapabilityTextFile),
  /** What was skipped and why (unreadable, too large, limits reached). */
  warnings: v.array(v.string()),
  error: orNull(v.string()),
});
export type CapabilityRootDiscovery = v.InferOutput<typeof CapabilityRootDiscovery>;

/** `capabilityRoots/discoverV1` result: one entry per requested root, in order. */
export const CapabilityRootsDiscoverResponse = v.object({ roots: v.array(CapabilityRootDiscovery) });
export type CapabilityRootsDiscoverResponse = v.InferOutput<typeof CapabilityRootsDiscoverResponse>;
