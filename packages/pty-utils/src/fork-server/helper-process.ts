import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, constants as fsConstants, openSync } from 'node:fs';
import type { Logger } from '@execd/protocol';
import { trustedExecutable } from '../executables/trusted-executable.ts';
import { joinWrapperPerl } from '../internal/cgroup-join.ts';
import { encodeRequest } from './helper-protocol.ts';
import { PERL_HELPER } from './perl-helper.ts';
import { PYTHON_HELPER } from './python-helper.ts';

/** Which program the helper is: Python where a trusted `python3` is (faster), else perl. */
export type ForkServerHelper = 'python' | 'perl';

/** The trusted program a helper of `kind` runs (`python3`, `perl`), undefined when this host has none. */
export function forkServerHelperProgram(kind: ForkServerHelper): string | undefined {
  return kind === 'python' ? trustedExecutable('python3') : (joinWrapperPerl() ?? undefined);
}

/** How long the helper may take to start before the server forks without it. */
const START_TIMEOUT_MS = 10_000;

/**
 * Starts a helper of `kind` (detached, empty environment, its stdout as latin1 text) and proves
 * this process can open its descriptors through `/proc`; undefined, nothing left running, when
 * its program is missing, it does not come up within `START_TIMEOUT_MS`, or `/proc` hides it.
 */
export async function startHelperProcess(
  kind: ForkServerHelper,
  logger: Logger,
): Promise<ChildProcess | undefined> {
  const program = forkServerHelperProgram(kind);
  if (program === undefined) return undefined;
  // Python isolated (no PYTHON* variables, no user site) and without `site` (faster to start).
  const args = kind === 'python' ? ['-I', '-S', '-c', PYTHON_HELPER] : ['-e', PERL_HELPER];
  let helper: ChildProcess;
  try {
    helper = spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: {} });
  } catch (error) {
    logger.debug('fork server helper did not start', { kind, error });
    return undefined;
  }
  helper.stdout?.setEncoding('latin1');
  helper.stderr?.setEncoding('utf8');
  const probe = await new Promise<number | undefined>((resolve) => {
    let text = '';
    const onData = (chunk: string): void => {
      text += chunk;
      const match = /^P (\d+)\n/.exec(text);
      if (match === null) return;
      helper.stdout?.off('data', onData);
      helper.off('exit', onExit);
      resolve(Number(match[1]));
    };
    const onExit = (): void => resolve(undefined);
    helper.stdout?.on('data', onData);
    helper.once('exit', onExit);
    helper.once('error', onExit);
    setTimeout(onExit, START_TIMEOUT_MS).unref();
  });
  const pid = helper.pid;
  if (probe === undefined || pid === undefined) {
    logger.debug('fork server helper did not come up', { kind });
    helper.kill('SIGKILL');
    return undefined;
  }
  try {
    closeSync(openSync(`/proc/${pid}/fd/${probe}`, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK));
  } catch (error) {
    logger.debug("fork server unavailable: the helper's descriptors cannot be opened", { error });
    helper.kill('SIGKILL');
    return undefined;
  }
  helper.stdin?.write(encodeRequest(['r', 'probe']));
  return helper;
}
