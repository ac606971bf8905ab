import type { Duplex } from 'node:stream';
import type { ServerEvent } from '@mci/protocol';
import type { WebSocket } from 'ws';

/**
 * The JSON text of an event, made once: the gateway hands the same event object to every connection,
 * so a large output is serialized once however many clients follow it.
 */
const wireTexts = new WeakMap<ServerEvent, string>();
function wireText(event: ServerEvent): string {
  let text = wireTexts.get(event);
  if (text === undefined) {
    text = JSON.stringify(event);
    wireTexts.set(event, text);
  }
  return text;
}

/**
 * Bytes of frames a connection holds back within one tick before it writes them anyway: the most
 * its socket buffer grows by between two writes, so the slow-reader check keeps its meaning.
 */
export const WRITE_BATCH_BYTES = 64 * 1024;

/**
 * The sending side of one WebSocket: text frames batched into one socket write per tick, the
 * backpressure of the socket's backlog (`maxBufferedBytes`), and the cut-off of a client that never
 * reads its replies.
 */
export class FrameWriter {
  readonly #socket: WebSocket;
  /** The socket under the WebSocket, corked while frames of one tick accumulate (see `#write`). */
  readonly #stream: Duplex;
  readonly #maxBufferedBytes: number;
  #corked = false;

  constructor(socket: WebSocket, stream: Duplex, maxBufferedBytes: number) {
    this.#socket = socket;
    this.#stream = stream;
    this.#maxBufferedBytes = maxBufferedBytes;
  }

  /** Whether the WebSocket is open. */
  get open(): boolean {
    return this.#socket.readyState === this.#socket.OPEN;
  }

  /** Whether more than `maxBufferedBytes` wait in the socket. */
  get backedUp(): boolean {
    return this.#socket.bufferedAmount > this.#maxBufferedBytes;
  }

  /** Sends an event (its text made once for every connection); the caller checks {@link backedUp}. */
  sendEvent(event: ServerEvent): void {
    this.#write(wireText(event));
  }

  /**
   * Sends a message as JSON, if the socket is open. Past four times `maxBufferedBytes` waiting, the
   * socket is closed (1008) instead, unless `always`.
   */
  sendMessage(message: object, always = false): void {
    if (!this.open) return;
    // Replies are bounded by the client's own requests; a client that never reads them is cut off.
    if (!always && this.#socket.bufferedAmount > this.#maxBufferedBytes * 4) {
      this.#socket.close(1008, 'client reads too slowly');
      return;
    }
    this.#write(JSON.stringify(message));
  }

  /**
   * Waits until the socket has sent most of its backlog; false if it closed meanwhile. Woken when
   * what was written before has gone to the kernel: the callback of an empty write runs after every
   * earlier chunk (checked again at least once a second).
   */
  async drained(): Promise<boolean> {
    while (this.open) {
      if (this.#socket.bufferedAmount <= this.#maxBufferedBytes / 2) return true;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 1000);
        this.#stream.write('', () => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return false;
  }

  /**
   * Sends a text frame. The frames of one tick leave in one socket write (up to
   * {@link WRITE_BATCH_BYTES}): the socket is corked at the first and uncorked on the next tick, the
   * use of `cork` Node documents. A flood of small events costs one system call per tick and
   * connection instead of one per event.
   * @see https://nodejs.org/api/stream.html#writablecork
   */
  #write(text: string): void {
    if (!this.#corked) {
      this.#corked = true;
      this.#stream.cork();
      process.nextTick(() => {
        this.#corked = false;
        this.#stream.uncork();
      });
    }
    this.#socket.send(text);
    if (this.#stream.writableLength >= WRITE_BATCH_BYTES) {
      this.#stream.uncork();
      this.#stream.cork();
    }
  }
}
