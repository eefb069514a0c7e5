// Runs one scripted Codex CLI session (the original Rust CLI, 0.169.0) against an exec-server URL
// through the shared oracle (/work/shared/tools/codex-oracle.mjs): a mock model issues the tool
// calls of the script, Codex executes them through the exec-server named by
// CODEX_EXEC_SERVER_URL, and the oracle captures the exact tool results Codex sends back.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The shared oracle: outside the repository, next to `codex-peer`. */
const ORACLE_PATH = fileURLToPath(new URL('../../../shared/tools/codex-oracle.mjs', import.meta.url));

/** Per-run bound on one `codex exec` (the oracle kills it after this many seconds). */
const CODEX_RUN_TIMEOUT_S = 150;

/** One model turn of a script: a function call (`arguments`) or a freeform tool call (`input`). */
export type ScriptStep =
  | { readonly name: string; readonly arguments: Record<string, unknown> }
  | { readonly name: string; readonly input: string };

/** One tool call as Codex answered it. */
export interface ToolRecord {
  readonly call: string;
  readonly arguments: unknown;
  /** The exact `function_call_output.output` (string, or content items for view_image). */
  readonly output: unknown;
  /** `output` with chunk id, wall time and unified-exec session id replaced (by the oracle). */
  readonly normalized: unknown;
}

/** What one Codex session produced. */
export interface CodexRun {
  readonly records: readonly ToolRecord[];
  /** Problems the oracle saw (non-zero exit, missing outputs, script not run to the end). */
  readonly anomalies: readonly string[];
  /** Codex's stderr (its log lines at the default level). */
  readonly stderr: string;
  /** The per-run temp folder (`/tmp/codex-oracle-XXXXXX`); `cwd` is `<tmp>/work`. */
  readonly tmp: string;
}

interface OracleModule {
  runScenario(
    scenario: { name: string; steps: readonly ScriptStep[] },
    options: Record<string, unknown>,
  ): Promise<{
    records: ToolRecord[];
    anomalies: string[];
    stderr: string;
  }>;
}

/** Options of {@link runCodex}. */
export interface RunCodexOptions {
  /** `ws://` URL of the exec-server Codex is to use. */
  readonly execServerUrl: string;
  /** Codex's sandbox: `bypass` (no sandbox, no approvals), `workspace-write` or `read-only`. */
  readonly sandbox: 'bypass' | 'workspace-write' | 'read-only';
  /** Folder for the raw request bodies Codex sent to the mock model (`<name>.req<k>.json`). */
  readonly dump: string;
  /** Files written into the working folder before Codex starts (relative name -> contents). */
  readonly files: Readonly<Record<string, string | Uint8Array>>;
}

/**
 * Runs `steps` as one Codex session. Codex inherits this process's environment plus
 * `CODEX_EXEC_SERVER_URL` (set for the duration of the run: the oracle copies `process.env`).
 */
export async function runCodex(
  name: string,
  steps: readonly ScriptStep[],
  options: RunCodexOptions,
): Promise<CodexRun> {
  const oracle = (await import(ORACLE_PATH)) as OracleModule;
  const previous = process.env.CODEX_EXEC_SERVER_URL;
  process.env.CODEX_EXEC_SERVER_URL = options.execServerUrl;
  let tmp = '';
  try {
    const result = await oracle.runScenario(
      { name, steps },
      {
        sandbox: options.sandbox,
        inheritEnv: true,
        dump: options.dump,
        timeout: CODEX_RUN_TIMEOUT_S,
        setup: ({ tmp: folder, cwd }: { tmp: string; cwd: string }) => {
          tmp = folder;
          for (const [file, contents] of Object.entries(options.files))
            writeFileSync(`${cwd}/${file}`, contents);
        },
      },
    );
    return { records: result.records, anomalies: result.anomalies, stderr: result.stderr, tmp };
  } finally {
    if (previous === undefined) delete process.env.CODEX_EXEC_SERVER_URL;
    else process.env.CODEX_EXEC_SERVER_URL = previous;
  }
}

/**
 * A tool result with what legitimately differs between two runs replaced: the oracle's masks
 * (chunk id, wall time, session id), every wall time (apply_patch reports one too), the run's
 * temp folder and any extra literal `masks`.
 */
export function maskResult(
  value: unknown,
  run: Pick<CodexRun, 'tmp'>,
  masks: Readonly<Record<string, string>> = {},
): unknown {
  let text = JSON.stringify(value) ?? 'null';
  if (run.tmp !== '') text = text.split(run.tmp).join('<TMP>');
  for (const [literal, label] of Object.entries(masks)) text = text.split(literal).join(label);
  text = text.replace(/Wall time: -?\d+(\.\d+)? seconds/g, 'Wall time: <WALL> seconds');
  return JSON.parse(text) as unknown;
}
