/**
 * What a manager reports while commands run (the original's UI events, spec §4.9): exactly one
 * `begin` and one `end` per exec_command that started a process, output deltas in between, and
 * one `terminalInteraction` per write_stdin that wrote or found the process alive.
 */
export type UnifiedExecEvent =
  | {
      readonly type: 'begin';
      readonly callId: string;
      readonly processId: number;
      readonly command: readonly string[];
      readonly cwd: string;
    }
  | {
      readonly type: 'outputDelta';
      readonly callId: string;
      readonly processId: number;
      /** At most 8192 bytes, never splitting a UTF-8 character. */
      readonly chunk: Uint8Array;
    }
  | {
      readonly type: 'terminalInteraction';
      /** The exec_command call that started the process. */
      readonly callId: string;
      readonly processId: number;
      /** What was written (empty for a poll). */
      readonly stdin: string;
    }
  | {
      readonly type: 'end';
      readonly callId: string;
      readonly processId: number;
      readonly command: readonly string[];
      readonly cwd: string;
      /** -1 when the process failed or its code is unknown. */
      readonly exitCode: number;
      /** Everything it printed (head and tail kept past 1 MiB, with the omission marker). */
      readonly aggregatedOutput: string;
      /** From spawn to the end event. */
      readonly durationMs: number;
      readonly status: 'completed' | 'failed';
    };
