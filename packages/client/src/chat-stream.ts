import type { ServerEvent, StreamResultEvent } from '@mci/protocol';
import { ClientError } from './client-error.ts';
import type { Connection } from './connection.ts';
import { EventQueue } from './event-queue.ts';
import type { Feed } from './feed.ts';

/**
 * What a stream ends with: the summary of every process it created (in intent order) and `text`, the
 * response pipe to hand back to the model.
 */
export type StreamResult = Omit<StreamResultEvent, 'type' | 'seq'>;

/** Options of `client.openStream`. */
export interface OpenStreamOptions {
  /** Label of the processes the stream creates (a chat message id, say): 1 to 256 characters. */
  ref?: string;
  /** The stream's id, unique among open streams. @default a random UUID */
  streamId?: string;
  /**
   * Called with each event of the stream (intents, process changes, outputs, logs, the result), in
   * order; the stream then does not buffer events for `for await`.
   */
  onEvent?: (event: ServerEvent) => void;
}

/** The part of the connection a stream sends its chunks through. */
type Requester = Pick<Connection, 'request'>;

/**
 * One model turn streamed to the server: `write` the model's output as it arrives (cut anywhere),
 * `end` it, and read `result`. Iterate the stream (`for await (const event of stream)`) to see each
 * intent, process change, output and log as it happens; the iteration ends with `stream.result`.
 * Survives dropped connections: events missed meanwhile are replayed, none twice.
 */
export class ChatStream implements AsyncIterable<ServerEvent> {
  readonly streamId: string;
  readonly ref: string | undefined;
  /** Resolves with the `stream.result` once the stream has ended and all its processes are idle. */
  readonly result: Promise<StreamResult>;
  readonly #connection: Requester;
  readonly #queue: EventQueue<ServerEvent> | undefined;
  #feed: Feed | undefined;
  #settled = false;
  #resolve!: (result: StreamResult) => void;
  #reject!: (error: ClientError) => void;

  /** @internal Made by `client.openStream`. */
  constructor(
    streamId: string,
    ref: string | undefined,
    connection: Requester,
    userOnEvent?: (event: ServerEvent) => void,
  ) {
    this.streamId = streamId;
    this.ref = ref;
    this.#connection = connection;
    this.#queue = userOnEvent ? undefined : new EventQueue<ServerEvent>();
    this.result = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.result.catch(() => {}); // also reported by end() and the iteration
  }

  /** @internal Called by the client with the feed that carries this stream's events. */
  attach(feed: Feed, started: Promise<unknown>): void {
    this.#feed = feed;
    started.catch((error: ClientError) => {
      this.#failed(error);
      feed.close();
    });
  }

  /** @internal The feed ended: with an error (connection lost for good), or closed before the result. */
  ended(error?: ClientError): void {
    if (this.#settled) return;
    this.#failed(
      error ?? new ClientError('CLOSED', `stopped following stream ${this.streamId} before its result`),
    );
  }

  /** @internal The feed's listener. */
  deliver(event: ServerEvent, userOnEvent?: (event: ServerEvent) => void): void {
    userOnEvent?.(event);
    this.#queue?.push(event);
    if (event.type === 'stream.result') {
      const { type: _type, seq: _seq, ...result } = event;
      this.#settled = true;
      this.#resolve(result);
      this.#queue?.end();
    }
  }

  /**
   * Pushes the next piece of model output. Pieces go out in call order; awaiting each is optional.
   * @throws ClientError `NOT_FOUND` (the stream is unknown or ended), `DISCONNECTED` (the connection
   * dropped while this piece was in flight: it may or may not have reached the server), `TIMEOUT`.
   */
  write(text: string): Promise<void> {
    const sent = this.#connection
      .request({ type: 'stream.chunk', streamId: this.streamId, text })
      .then(() => {});
    sent.catch(() => {}); // an unawaited write must not become an unhandled rejection
    return sent;
  }

  /** Ends the turn; `result` follows once every process of the stream is idle. */
  async end(): Promise<void> {
    try {
      await this.#connection.request({ type: 'stream.end', streamId: this.streamId });
    } catch (error) {
      this.#failed(error as ClientError);
      throw error;
    }
  }

  /** Stops following the stream's events (the stream itself goes on on the server). */
  close(): void {
    this.#feed?.close();
    this.#queue?.end();
  }

  [Symbol.asyncIterator](): AsyncIterator<ServerEvent> {
    if (!this.#queue)
      throw new TypeError('this stream delivers to its onEvent callback; it cannot be iterated');
    return this.#queue;
  }

  #failed(error: ClientError): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#reject(error);
    this.#queue?.fail(error);
  }
}
