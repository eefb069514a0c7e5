import type { Logger } from '@execd/protocol';
import { locateBwrap, probeBwrap } from '@execd/sandboxing';
import type { Readiness } from '../server/index.ts';

/**
 * `--require-sandbox`: probes bubblewrap once, in the background, and answers readiness from the
 * result: not ready while probing, nor when it cannot run (not found, user namespaces refused by
 * the container's seccomp or AppArmor profile...), with the reason for `GET /readyz`.
 */
export function sandboxReadiness(logger: Logger): () => Readiness {
  let state: Readiness = { ready: false, reason: 'probing the sandbox (bubblewrap)' };
  const probe = async (): Promise<Readiness> => {
    if (process.platform !== 'linux') return { ready: false, reason: `no sandbox on ${process.platform}` };
    const path = locateBwrap();
    if (path === undefined) return { ready: false, reason: 'bubblewrap (bwrap) not found on PATH' };
    try {
      await probeBwrap(path);
      return { ready: true };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { ready: false, reason: `bubblewrap ${path} cannot run sandboxes here: ${message}` };
    }
  };
  void probe().then((result) => {
    state = result;
    if (result.ready) logger.info('sandbox probe passed');
    else logger.error('sandbox probe failed; /readyz answers 503', { reason: result.reason });
  });
  return () => state;
}
