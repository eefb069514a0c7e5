// Fixtures of the side-by-side method suite (methods.compat.ts): one folder tree per server, built
// the same way, so that the two transcripts differ only by the folder's path (masked).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileUri } from '@execd/protocol';

/** A folder tree for one server's fs scenarios. */
export interface FsFixture {
  /** Real path of the folder (masked as `<ROOT>` in transcripts). */
  readonly root: string;
  /** `file://` URI of `root/relative`. */
  uri(relative?: string): string;
}

/**
 * Builds under a fresh temp folder:
 * `file.txt`, `dir/inner.txt`, `dir/sub/deep.txt`, `link -> file.txt`, `dir-link -> dir`,
 * `loop-a <-> loop-b` (a symlink loop), `fifo`, `ws/` (a workspace with `.git/`) with
 * `ws/escape -> ../outside` and `outside/` next to it.
 */
export function buildFsFixture(): FsFixture {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'execd-compat-fs-')));
  writeFileSync(join(root, 'file.txt'), 'hello\n');
  mkdirSync(join(root, 'dir/sub'), { recursive: true });
  writeFileSync(join(root, 'dir/inner.txt'), 'inner\n');
  writeFileSync(join(root, 'dir/sub/deep.txt'), 'deep\n');
  symlinkSync('file.txt', join(root, 'link'));
  symlinkSync('dir', join(root, 'dir-link'));
  symlinkSync('loop-b', join(root, 'loop-a'));
  symlinkSync('loop-a', join(root, 'loop-b'));
  execFileSync('mkfifo', [join(root, 'fifo')]);
  mkdirSync(join(root, 'ws/.git'), { recursive: true });
  mkdirSync(join(root, 'outside'));
  symlinkSync('../outside', join(root, 'ws/escape'));
  return { root, uri: (relative = '') => pathToFileUri(relative === '' ? root : join(root, relative)) };
}

/**
 * The sandbox form Codex 0.169.0 sends on `fs/*` and `process/start` (captured from a
 * workspace-write session), with `ws/` as the workspace. `tmp: false` leaves out the write access
 * to `/tmp` and `$TMPDIR` that Codex grants by default, so that `outside/` (under /tmp) is not
 * writable.
 */
export function codexSandbox(
  fixture: FsFixture,
  options: { readonly tmp: boolean },
): Record<string, unknown> {
  const special = (kind: string, subpath?: string) => ({
    type: 'special',
    value: subpath === undefined ? { kind } : { kind, subpath },
  });
  const workspace = fixture.uri('ws');
  return {
    permissions: {
      type: 'managed',
      file_system: {
        type: 'restricted',
        entries: [
          { path: special('root'), access: 'read' },
          { path: special('project_roots'), access: 'write' },
          ...(options.tmp
            ? [
                { path: special('slash_tmp'), access: 'write' },
                { path: special('tmpdir'), access: 'write' },
              ]
            : []),
          { path: special('project_roots', '.git'), access: 'read', missing_path_behavior: 'skip' },
          { path: special('project_roots', '.codex'), access: 'read', missing_path_behavior: 'skip' },
        ],
      },
      network: 'restricted',
    },
    cwd: workspace,
    policyContext: { cwd: workspace, workspaceRoots: [workspace] },
    workspaceRoots: [workspace],
    userHomeDir: pathToFileUri(process.env.HOME ?? '/root'),
    windowsSandboxLevel: 'disabled',
    useLegacyLandlock: false,
  };
}

/** A local HTTP origin for `http/request`: fixed answers, no `Date` surprises beyond the header. */
export interface HttpOrigin extends AsyncDisposable {
  readonly url: string;
}

/**
 * Routes: `/echo` answers `METHOD URL BODY` with `x-echo: <the x-k request header>`; `/redirect`
 * 302s to `/echo`; `/big` streams 3 MiB in 64 KiB writes; `/missing` is 404.
 */
export async function startHttpOrigin(): Promise<HttpOrigin> {
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = request.url ?? '/';
      if (url === '/redirect') {
        response.writeHead(302, { location: '/echo' });
        response.end();
      } else if (url === '/big') {
        response.writeHead(200, { 'content-type': 'application/octet-stream' });
        const block = Buffer.alloc(64 * 1024, 0x61);
        for (let i = 0; i < 48; i++) response.write(block);
        response.end();
      } else if (url.startsWith('/echo')) {
        const header = request.headers['x-k'];
        response.writeHead(200, { 'content-type': 'text/plain', 'x-echo': String(header ?? '') });
        response.end(`${request.method} ${url} ${Buffer.concat(chunks).toString('utf8')}`);
      } else {
        response.writeHead(404, { 'content-type': 'text/plain' });
        response.end('no such route');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    async [Symbol.asyncDispose]() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
