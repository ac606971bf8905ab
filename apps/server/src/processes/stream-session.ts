import type { Intent, IntentStream } from '@mci/intent-extractor';
import {
  type CheckMode,
  CheckModeSchema,
  type DistributiveOmit,
  formatResults,
  type IntentAttributes,
  type ProcessResult,
  type ProcessSnapshot,
  type RejectedBlock,
  type ServerEvent,
} from '@mci/protocol';
import { type Context, context } from '@opentelemetry/api';
import { PROCESS_LANGS } from './limits.ts';
import type { CreateProcessInput, Principal, StreamHandle, StreamResult } from './process-manager-types.ts';
import type { EventRoute } from './process-store.ts';
import { ServerError } from './server-error.ts';

/** The buffering limits of a stream's extractor, in characters (UTF-16 code units). */
export interface IntentStreamLimits {
  /** Most content kept for one open exec block (the code limit). */
  maxBlockLength: number;
  /** Most characters of an unfinished line held. */
  maxLineLength: number;
}

/** What a stream needs from the process manager. */
export interface StreamHost {
  /** Creates a process for an intent; `hold` keeps it queued outside the run queue until released. */
  createForStream(input: CreateProcessInput, session: StreamSession, hold: boolean): number;
  /** Puts a held process in the run queue; false when it is no longer waiting (killed meanwhile). */
  release(pid: number): boolean;
  isIdle(pid: number): boolean;
  /** Snapshot plus latest run outputs and logs, or undefined for a deleted process. */
  result(pid: number): Promise<ProcessResult | undefined>;
  emit(event: DistributiveOmit<ServerEvent, 'seq'>, route: EventRoute): void;
  /**
   * Keeps the store open until `work` settles (a stream's result, read from the store once its
   * processes are idle), and logs its failure.
   */
  background(work: Promise<unknown>): void;
  /** Throws `SHUTTING_DOWN` when the server no longer takes work. */
  checkAccepting(): void;
  readonly responsePipeBytes: number;
  /** The code limit, in UTF-8 bytes (an open exec block past it is rejected). */
  readonly maxCodeBytes: number;
}

const RUNNABLE_LANGS: readonly string[] = PROCESS_LANGS;

/**
 * One model turn: chunks go through the intent extractor; each closed ts/js exec intent becomes a
 * process (run one after another, in order), others are reported as rejected; once ended and all its
 * processes are idle, the stream emits `stream.result` with the response pipe. Opened with
 * `autorun: false`, its processes are created idle and run on their `run` signals, in any order; the
 * result then waits until each has run and ended, or {@link StreamSession.stopWaiting} is called.
 */
export class StreamSession implements StreamHandle {
  readonly streamId: string;
  readonly ref: string | undefined;
  readonly principal: Principal;
  readonly result: Promise<StreamResult>;
  /** The trace context active when the stream opened: its processes' runs continue it. */
  readonly traceContext: Context = context.active();
  readonly #host: StreamHost;
  readonly #extractor: IntentStream;
  /** Pids created by this stream, in intent order. */
  readonly #pids: number[] = [];
  readonly #rejected: RejectedBlock[] = [];
  /** Held pids waiting for their turn, in order. */
  readonly #pending: number[] = [];
  /** Processes created idle (`autorun: false`) that have not run yet. */
  readonly #waiting = new Set<number>();
  readonly #autorun: boolean;
  /** The check mode of the stream's processes (a block's `check=` attribute wins). */
  readonly #check: CheckMode | undefined;
  readonly #session: string | undefined;
  /** The released pid whose run has not ended yet. */
  #current: number | undefined;
  #ended = false;
  #finished = false;
  #lastActivityMs = performance.now();
  #resolve!: (result: Promise<StreamResult>) => void;

  constructor(
    host: StreamHost,
    extractor: IntentStream,
    init: {
      streamId: string;
      ref: string | undefined;
      principal: Principal;
      autorun?: boolean;
      check?: CheckMode | undefined;
      /** The session of the stream's processes, opened by the caller. */
      session?: string | undefined;
    },
  ) {
    this.#host = host;
    this.#autorun = init.autorun ?? true;
    this.#check = init.check;
    this.#session = init.session;
    this.#extractor = extractor;
    this.streamId = init.streamId;
    this.ref = init.ref;
    this.principal = init.principal;
    this.result = new Promise((resolve) => {
      this.#resolve = resolve;
    });
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** When the stream was opened or last given a chunk (`performance.now()` ms). */
  get lastActivityMs(): number {
    return this.#lastActivityMs;
  }

  /** Pids created by this stream, in intent order. */
  get pids(): readonly number[] {
    return this.#pids;
  }

  push(text: string): void {
    if (this.#ended)
      throw new ServerError('CONFLICT', `stream ${this.streamId} has ended`, { path: 'streamId' });
    if (typeof text !== 'string')
      throw new ServerError('VALIDATION', 'text must be a string', { path: 'text' });
    this.#host.checkAccepting();
    this.#lastActivityMs = performance.now();
    let tooLarge = false;
    for (const intent of this.#extractor.push(text)) {
      tooLarge ||= intent.tooLarge === true;
      this.#accept(intent);
    }
    if (tooLarge) {
      throw new ServerError(
        'CODE_TOO_LARGE',
        `an exec block of stream ${this.streamId} is over the code limit of ${this.#host.maxCodeBytes} bytes: it was rejected and the rest of it is skipped`,
        { path: 'text' },
      );
    }
  }

  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    for (const intent of this.#extractor.end()) this.#accept(intent);
    this.#maybeFinish();
  }

  stopWaiting(): void {
    this.#waiting.clear();
    this.#maybeFinish();
  }

  /** Called by the manager whenever one of this stream's processes becomes idle (after a run). */
  processIdle(pid: number): void {
    this.#waiting.delete(pid);
    const waiting = this.#pending.indexOf(pid);
    if (waiting >= 0) this.#pending.splice(waiting, 1);
    if (pid === this.#current) {
      this.#current = undefined;
      this.#advance();
    }
    this.#maybeFinish();
  }

  #accept(intent: Intent): void {
    const route = {
      owner: this.principal.id,
      ...(this.ref === undefined ? {} : { ref: this.ref }),
      streamId: this.streamId,
    };
    const base = {
      type: 'intent' as const,
      streamId: this.streamId,
      ...(this.ref !== undefined && { ref: this.ref }),
      index: intent.index,
      lang: intent.lang,
    };
    const attributes = intent.attributes as IntentAttributes;
    const reason = rejectionOf(intent, this.#host.maxCodeBytes);
    if (reason !== undefined) {
      this.#rejected.push({ index: intent.index, lang: intent.lang, reason });
      this.#host.emit({ ...base, attributes, rejected: reason }, route);
      return;
    }
    const autorun = this.#autorun;
    const hold = autorun && (this.#current !== undefined || this.#pending.length > 0);
    let pid: number;
    try {
      pid = this.#host.createForStream(
        {
          code: intent.code,
          lang: intent.lang,
          ...(this.ref === undefined ? {} : { ref: this.ref }),
          ...(intent.attributes.timeout === undefined
            ? {}
            : { timeoutMs: Number(intent.attributes.timeout) }),
          metadata: { streamId: this.streamId, intentIndex: intent.index, attributes },
          ...(!autorun && { autorun: false }),
          ...checkOf(intent.attributes.check, this.#check),
          ...(this.#session !== undefined && { session: this.#session }),
        },
        this,
        hold,
      );
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.#rejected.push({ index: intent.index, lang: intent.lang, reason: message });
      this.#host.emit({ ...base, attributes, rejected: message }, route);
      return;
    }
    this.#pids.push(pid);
    if (!autorun) this.#waiting.add(pid);
    else if (hold) this.#pending.push(pid);
    // A run can end before create returns (the pool refused it at once): then it is not current.
    else if (!this.#host.isIdle(pid)) this.#current = pid;
    this.#host.emit({ ...base, pid, attributes }, { ...route, pid });
  }

  #advance(): void {
    while (this.#current === undefined && this.#pending.length > 0) {
      const next = this.#pending.shift()!;
      if (this.#host.release(next)) this.#current = next;
    }
  }

  #maybeFinish(): void {
    if (this.#finished || !this.#ended || this.#current !== undefined || this.#pending.length > 0) return;
    if (this.#waiting.size > 0) return;
    if (!this.#pids.every((pid) => this.#host.isIdle(pid))) return;
    this.#finished = true;
    const sent = this.#sendResult();
    this.#host.background(sent);
    this.#resolve(sent);
  }

  /**
   * Reads what the stream's processes did, emits `stream.result` and returns it.
   * @throws StoreError when the store cannot be read (the stream's result then rejects).
   */
  async #sendResult(): Promise<StreamResult> {
    const results = (await Promise.all(this.#pids.map((pid) => this.#host.result(pid)))).filter(
      (r) => r !== undefined,
    );
    const text = formatResults(results, { maxBytes: this.#host.responsePipeBytes, rejected: this.#rejected });
    const processes: ProcessSnapshot[] = results.map(
      ({ outputs, stdout, stderr, truncated, ...snapshot }) => snapshot,
    );
    const result: StreamResult = {
      streamId: this.streamId,
      ...(this.ref === undefined ? {} : { ref: this.ref }),
      processes,
      text,
    };
    this.#host.emit(
      { type: 'stream.result', ...result },
      {
        owner: this.principal.id,
        ...(this.ref === undefined ? {} : { ref: this.ref }),
        streamId: this.streamId,
      },
    );
    return result;
  }
}

/** Why an intent is not run, or undefined when it runs. */
function rejectionOf(intent: Intent, maxCodeBytes: number): string | undefined {
  if (intent.tooLarge) return `code is over the limit of ${maxCodeBytes} bytes, so it was not run`;
  if (!intent.closed) return 'unclosed block: the stream ended inside it, so it was not run';
  if (intent.lang === '') return `no language given (use ${PROCESS_LANGS.join(', ')})`;
  if (!RUNNABLE_LANGS.includes(intent.lang.toLowerCase())) {
    return `language "${intent.lang}" is not supported (use ${PROCESS_LANGS.join(', ')})`;
  }
  const timeout = intent.attributes.timeout;
  if (timeout !== undefined && (typeof timeout !== 'string' || !/^[1-9][0-9]{0,9}$/.test(timeout.trim()))) {
    return `timeout attribute must be a positive integer (ms), got ${JSON.stringify(timeout)}`;
  }
  return undefined;
}

/** A block's `check=` attribute when it names a mode, else the stream's mode. */
function checkOf(attribute: unknown, stream: CheckMode | undefined): { check?: CheckMode } {
  const parsed = CheckModeSchema.safeParse(attribute);
  if (parsed.success) return { check: parsed.data };
  return stream === undefined ? {} : { check: stream };
}
