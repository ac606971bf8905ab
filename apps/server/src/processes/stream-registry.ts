import type { IntentStream } from '@mci/intent-extractor';
import type { CheckMode } from '@mci/protocol';
import { normalizeRef } from './limits.ts';
import type { Principal } from './process-manager-types.ts';
import { ServerError } from './server-error.ts';
import { type StreamHost, StreamSession } from './stream-session.ts';

/** Most finished streams remembered for `getStream` (the oldest are forgotten first). */
export const MAX_FINISHED_STREAMS = 10_000;

/** Longest stream id, in characters. */
export const MAX_STREAM_ID_LENGTH = 256;

/** Most streams one principal may have open (not ended) at once. */
export const DEFAULT_MAX_OPEN_STREAMS = 64;

/**
 * How long an open stream may go without a chunk before it may be ended to make room for a new one
 * of its principal (a client that disconnected mid-turn does not hold its quota for ever), in ms.
 */
export const DEFAULT_STREAM_IDLE_MS = 10 * 60_000;

/** The key of a stream: ids are scoped to their principal, so two clients may use the same id. */
const keyOf = (principalId: string, streamId: string) => `${principalId}\u0000${streamId}`;

/** What `stream.open` asks for: the stream's id, and how its blocks run (see `StreamRegistry.open`). */
export interface OpenStreamInput {
  streamId: string;
  ref?: string;
  autorun?: boolean;
  check?: CheckMode | undefined;
  session?: string | undefined;
}

/**
 * The open and recently finished streams, by principal and id, and which stream each stream-created
 * pid belongs to.
 */
export class StreamRegistry {
  readonly #streams = new Map<string, StreamSession>();
  readonly #streamOf = new Map<number, StreamSession>();
  /** Open (not ended) streams per principal id. */
  readonly #open = new Map<string, Set<StreamSession>>();
  readonly #maxOpen: number;
  readonly #idleMs: number;

  /**
   * @param maxOpen most open streams per principal. @default {@link DEFAULT_MAX_OPEN_STREAMS}
   * @param idleMs idle time after which an open stream may be ended for a new one. @default {@link DEFAULT_STREAM_IDLE_MS}
   */
  constructor(maxOpen = DEFAULT_MAX_OPEN_STREAMS, idleMs = DEFAULT_STREAM_IDLE_MS) {
    this.#maxOpen = maxOpen;
    this.#idleMs = idleMs;
  }

  /**
   * Opens a stream. Its id is scoped to `principal`: another principal's stream of the same id is
   * neither visible nor in the way.
   * @throws ServerError `VALIDATION` (bad `streamId` or `ref`), `CONFLICT` (id in use by this
   * principal), `LIMIT_EXCEEDED` (the principal has `maxOpen` open streams, none idle for `idleMs`).
   */
  open(
    host: StreamHost,
    extractor: () => IntentStream,
    input: OpenStreamInput,
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
    const key = keyOf(principal.id, streamId);
    if (this.#streams.has(key)) {
      throw new ServerError('CONFLICT', `stream ${streamId} already exists`, { path: 'streamId' });
    }
    const open = this.#openOf(principal.id);
    if (open.size >= this.#maxOpen) {
      throw new ServerError(
        'LIMIT_EXCEEDED',
        `too many open streams: ${open.size} of this client are not ended (limit ${this.#maxOpen}); end some first`,
        { path: 'streamId' },
      );
    }
    const ref = normalizeRef(input.ref);
    const session = new StreamSession(host, extractor(), {
      streamId,
      ref,
      principal,
      autorun: input.autorun ?? true,
      check: input.check,
      session: input.session,
    });
    this.#streams.set(key, session);
    open.add(session);
    this.#open.set(principal.id, open);
    const forget = () => this.#forget(session);
    void session.result.then(forget, forget);
    return session;
  }

  /**
   * A stream `principal` may see: its own stream of that id, or for an operator, any principal's
   * (its own first). @throws ServerError `NOT_FOUND`.
   */
  get(streamId: string, principal: Principal): StreamSession {
    let session = this.#streams.get(keyOf(principal.id, streamId));
    if (!session && principal.role === 'operator') {
      for (const other of this.#streams.values()) {
        if (other.streamId === streamId) {
          session = other;
          break;
        }
      }
    }
    if (!session) {
      throw new ServerError('NOT_FOUND', `stream ${streamId} not found`, { path: 'streamId' });
    }
    return session;
  }

  /** Records that `pid` was created by `session`. */
  attach(pid: number, session: StreamSession): void {
    this.#streamOf.set(pid, session);
  }

  /** Whether `pid` was created by a stream (it runs on this node, in its stream's order). */
  has(pid: number): boolean {
    return this.#streamOf.has(pid);
  }

  /** Tells the stream of `pid`, if any, that the process is idle. */
  processIdle(pid: number): void {
    this.#streamOf.get(pid)?.processIdle(pid);
  }

  /** Ends every open stream (shutdown). */
  endAll(): void {
    for (const session of this.#streams.values()) session.end();
  }

  /** The open streams of a principal, without ended ones; at the cap, idle ones are ended first. */
  #openOf(principalId: string): Set<StreamSession> {
    const open = this.#open.get(principalId) ?? new Set<StreamSession>();
    for (const session of open) if (session.ended) open.delete(session);
    if (open.size < this.#maxOpen) return open;
    const now = performance.now();
    for (const session of open) {
      if (now - session.lastActivityMs < this.#idleMs) continue;
      session.end();
      open.delete(session);
    }
    return open;
  }

  #forget(session: StreamSession): void {
    const open = this.#open.get(session.principal.id);
    open?.delete(session);
    if (open?.size === 0) this.#open.delete(session.principal.id);
    for (const pid of session.pids) this.#streamOf.delete(pid);
    // Map order is insertion order: the oldest finished streams go first.
    for (const [id, other] of this.#streams) {
      if (this.#streams.size <= MAX_FINISHED_STREAMS) break;
      if (other !== session && other.ended) this.#streams.delete(id);
    }
  }
}
