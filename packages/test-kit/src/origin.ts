import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** An origin server in a child process on 127.0.0.1:0 (`hello <Host><path>`; POST echoes the body). */
export interface Origin extends AsyncDisposable {
  readonly port: number;
  /** Requests it reported so far. */
  readonly requests: number;
  close(): Promise<void>;
}

const ORIGIN_FIXTURE = fileURLToPath(new URL('../fixtures/origin.mjs', import.meta.url));

/**
 * Starts `fixtures/origin.mjs` in a child process. The managed network's proxy never connects to
 * a port of its own process (the executor: in a test, the test process), so an origin a proxied
 * command must reach lives in another process.
 */
async function startChildOrigin(args: readonly string[]): Promise<Origin> {
  const child = spawn(process.execPath, [ORIGIN_FIXTURE, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let requests = 0;
  let out = '';
  const port = new Promise<number>((resolve, reject) => {
    child.once('close', () => reject(new Error('the origin fixture exited before listening')));
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      out += text;
      let newline = out.indexOf('\n');
      while (newline >= 0) {
        const line = out.slice(0, newline);
        out = out.slice(newline + 1);
        if (line === 'request') requests++;
        else if (line.startsWith('port ')) resolve(Number(line.slice(5)));
        newline = out.indexOf('\n');
      }
    });
  });
  const close = async (): Promise<void> => {
    child.kill('SIGTERM');
    await closed;
  };
  try {
    return {
      port: await port,
      get requests() {
        return requests;
      },
      close,
      [Symbol.asyncDispose]: close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Starts a plain HTTP origin in a child process. */
export function startOrigin(): Promise<Origin> {
  return startChildOrigin([]);
}

/** Starts an HTTPS origin with this certificate (PEM files) in a child process. */
export function startTlsOrigin(cert: {
  readonly certPath: string;
  readonly keyPath: string;
}): Promise<Origin> {
  return startChildOrigin([cert.certPath, cert.keyPath]);
}
