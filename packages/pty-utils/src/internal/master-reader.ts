import type { OnReadOpts, SocketConstructorOpts } from 'node:net';
import { ReadStream } from 'node:tty';

/**
 * The most one read of a PTY master returns: the line discipline's buffer (4 KiB) less one byte.
 * libuv keeps reading within one wake-up only while a read fills the whole buffer it was given,
 * so a buffer of exactly this size lets it take what the terminal queued meanwhile without going
 * back to epoll; a larger one (libuv's default 64 KiB) costs one wake-up per 4 KiB.
 */
export const PTY_READ_BYTES = 4095;

/** Size of the blocks the reads are gathered into (views of them are what consumers keep). */
const BLOCK_BYTES = 64 * 1024;

/**
 * Opens a PTY master for reading with one fixed read buffer (`onread`: no allocation, stream push
 * or event per read) and gathers the reads of one turn of the event loop into one `data` event:
 * a terminal streaming flat out hands out 4,095 bytes per read, and the per-read work of a Node
 * stream cost as much CPU as the rest of the server's output path.
 *
 * The stream is half-open (at EOF the fd stays open for `drainMaster`). Whatever was gathered is
 * emitted before the stream's own `end`, `error` and `close`, so those still come after every byte.
 */
export function openMasterReader(fd: number): ReadStream {
  let block = Buffer.allocUnsafe(BLOCK_BYTES);
  let start = 0;
  let end = 0;
  let scheduled = false;
  // Assigned once the stream exists; `flush` runs only after that.
  let master: ReadStream;
  const flush = (): void => {
    scheduled = false;
    if (end === start) return;
    const bytes = block.subarray(start, end);
    start = end;
    if (BLOCK_BYTES - end < PTY_READ_BYTES) {
      block = Buffer.allocUnsafe(BLOCK_BYTES);
      start = 0;
      end = 0;
    }
    // Also when destroyed: an EIO (the master's usual end) destroys the stream before `error`.
    master.emit('data', bytes);
  };
  const onRead = (nread: number, buffer: Uint8Array): boolean => {
    if (BLOCK_BYTES - end < nread) flush();
    block.set(buffer.subarray(0, nread), end);
    end += nread;
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
    return true;
  };
  // `onread` is net.Socket's option, which tty.ReadStream passes on (its typings leave it out).
  const options: SocketConstructorOpts & { readonly onread: OnReadOpts } = {
    allowHalfOpen: true,
    onread: { buffer: Buffer.allocUnsafe(PTY_READ_BYTES), callback: onRead },
  };
  master = new ReadStream(fd, options);
  for (const event of ['end', 'error', 'close'] as const) master.prependListener(event, flush);
  return master;
}
