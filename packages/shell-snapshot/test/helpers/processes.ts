import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { LaunchCommand } from '../../src/index.ts';
import { shellQuote } from '../../src/index.ts';

/** What a finished launch printed. */
export interface LaunchOutput {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number | null;
}

/** Runs a launch on pipes (stdin /dev/null) and collects its output. */
export function runPipe(command: LaunchCommand): Promise<LaunchOutput> {
  const [file, ...args] = command.argv;
  return new Promise((resolve, reject) => {
    const child = spawn(file as string, args, {
      cwd: command.cwd,
      env: command.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(command.arg0 === undefined ? {} : { argv0: command.arg0 }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.on('error', reject);
    child.on('close', (exitCode) => resolve({ stdout, stderr, exitCode }));
  });
}

/**
 * Runs a launch in a real PTY through util-linux `script` (the package has no node-pty of its
 * own). The PTY merges stdout and stderr; `\r\n` is turned back into `\n`.
 */
export async function runTty(command: LaunchCommand): Promise<LaunchOutput> {
  const hasShell = Object.hasOwn(command.env, 'SHELL');
  // `script` runs `$SHELL -c <line>`; the line restores the launch's own env before exec.
  const line = `${hasShell ? '' : 'unset SHELL; '}exec ${command.argv.map(shellQuote).join(' ')}`;
  const result = await runPipe({
    argv: ['script', '-qec', line, '/dev/null'],
    cwd: command.cwd,
    env: { ...command.env, ...(hasShell ? {} : { SHELL: '/bin/sh' }) },
  });
  return { ...result, stdout: result.stdout.replaceAll('\r\n', '\n') };
}

/** Pids of live processes whose command line contains `needle`. */
export function processesMatching(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cmdline.includes(needle)) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}
