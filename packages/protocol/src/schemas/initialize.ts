import * as v from 'valibot';
import { opt } from './common.ts';
import { EnvironmentInfo } from './environment.ts';

/** `initialize` params: the first request of every connection. */
export const InitializeParams = v.object({
  /** Free-form name of the client, for logs. */
  clientName: v.string(),
  /** Resume a detached session (after a dropped connection) instead of creating one. */
  resumeSessionId: opt(v.string()),
  /**
   * execd extension: the client accepts `process/outputBatch` notifications (several output
   * chunks in one frame), on either codec. Without it the server sends the original's one chunk
   * per `process/output`. Original servers ignore it.
   */
  outputBatches: opt(v.boolean()),
  /**
   * execd extension: the client accepts `process/waitingForInput` notifications and
   * `ReadResponse.waitingForInput` (a tty process's terminal waits for input). Never sent to a
   * client that did not ask. Original servers ignore it.
   */
  waitingForInput: opt(v.boolean()),
});
export type InitializeParams = v.InferOutput<typeof InitializeParams>;

/** `initialize` result. */
export const InitializeResponse = v.object({
  /** UUID v4 naming the session; pass it as `resumeSessionId` to resume after a disconnect. */
  sessionId: v.string(),
  /** Newer servers (Codex CLI >= 0.169, execd) also describe the environment here. */
  environmentInfo: opt(EnvironmentInfo),
});
export type InitializeResponse = v.InferOutput<typeof InitializeResponse>;
