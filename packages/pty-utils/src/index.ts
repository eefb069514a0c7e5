// @execd/pty-utils: spawn a child in a PTY or on pipes behind one SpawnedProcess shape.

export {
  DEFAULT_DRAIN_TIMEOUT_MS,
  DEFAULT_PTY_COLS,
  DEFAULT_PTY_ROWS,
  DEFAULT_TERMINATE_GRACE_MS,
  MAX_CHUNK_BYTES,
  OUTPUT_HIGH_WATER_BYTES,
  OUTPUT_LOW_WATER_BYTES,
} from './constants.ts';
export { exitCodeFromStatus, signalName, signalNumber, toExitStatus } from './exit-status.ts';
export {
  isProcessAlive,
  processGroupAlive,
  sessionPids,
  signalProcessGroup,
  signalSession,
  signalSessionOthers,
} from './process-group.ts';
export { DEFAULT_EXEC_PATH, type ResolvedSpawn, resolveSpawn } from './resolve-program.ts';
export { spawnPipe } from './spawn-pipe.ts';
export { spawnPty } from './spawn-pty.ts';
export { isStdinClosedError, STDIN_CLOSED_CODE, stdinClosedError } from './stdin-closed.ts';
export type {
  ExitStatus,
  Logger,
  OutputChunk,
  OutputStreamName,
  PipeSpawnOptions,
  PtySpawnOptions,
  SpawnedProcess,
  SpawnOptions,
  TerminateOptions,
} from './types.ts';
