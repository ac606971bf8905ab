import { normalizeRef } from './limits.ts';
import type { Principal } from './process-manager-types.ts';
import { ServerError } from './server-error.ts';
import { type IntentStreamLike, type StreamHost, StreamSession } from './stream-session.ts';

/** Most finished streams remembered for `getStream` (the oldest are forgotten first). */
export const MAX_FINISHED_STREAMS = 10_000;

/** Longest stream id, in characters. */
export const MAX_STREAM_ID_LENGTH = 256;

/** The open and recently finished streams, by id, and which stream each stream-created pid belongs to. */
export class StreamRegistry {
  readonly #streams = new Map<string, StreamSession>();
  readonly #streamOf = new Map<number, StreamSession>();

  /**
   * Opens a stream.
   * @throws ServerError `VALIDATION` (bad `streamId` or `ref`), `CONFLICT` (id in use).
   */
  open(
    host: StreamHost,
    extractor: () => IntentStreamLike,
    input: { streamId: string; ref?: string },
    principal: Principal,
  ): StreamSession {
    const { streamId } = input;
    if (typeof streamId !== 'string' || streamId.trim() === '' || streamId.length > MAX_STREAM_ID_LENGTH) {
      throw new ServerError(
        'VALIDATION',
        `streamId must be a non-empty string of at most ${MAX_STREAM_ID_LENGTH} characters`,
        { path: 'streamId' },
      );
    }
    if (this.#streams.has(streamId)) {
      throw new ServerError('CONFLICT', `stream ${streamId} already exists`, { path: 'streamId' });
    }
    const ref = normalizeRef(input.ref);
    const session = new StreamSession(host, extractor(), { streamId, ref, principal });
    this.#streams.set(streamId, session);
    void session.result.then(() => this.#forget(session));
    return session;
  }

  /** A stream `principal` may see (`NOT_FOUND` otherwise; operators see all). */
  get(streamId: string, principal: Principal): StreamSession {
    const session = this.#streams.get(streamId);
    if (!session || (principal.role !== 'operator' && session.principal.id !== principal.id)) {
      throw new ServerError('NOT_FOUND', `stream ${streamId} not found`, { path: 'streamId' });
    }
    return session;
  }

  /** Records that `pid` was created by `session`. */
  attach(pid: number, session: StreamSession): void {
    this.#streamOf.set(pid, session);
  }

  /** Tells the stream of `pid`, if any, that the process is idle. */
  processIdle(pid: number): void {
    this.#streamOf.get(pid)?.processIdle(pid);
  }

  /** Ends every open stream (shutdown). */
  endAll(): void {
    for (const session of this.#streams.values()) session.end();
  }

  #forget(session: StreamSession): void {
    for (const pid of session.pids) this.#streamOf.delete(pid);
    // Map order is insertion order: the oldest finished streams go first.
    for (const [id, other] of this.#streams) {
      if (this.#streams.size <= MAX_FINISHED_STREAMS) break;
      if (other !== session && other.ended) this.#streams.delete(id);
    }
  }
}
