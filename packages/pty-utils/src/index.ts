export type {
  ExitStatus,
  OutputChunk,
  OutputStreamName,
  PipeSpawnOptions,
  PtySpawnOptions,
  SpawnedProcess,
  SpawnOptions,
  TerminateOptions,
} from './types.ts';
