import { formatResults, type ProcessResult, type ProcessSnapshot } from '@mci/protocol';
import type { UnsequencedEvent } from '../processes/event-log.ts';
import type { EventRoute } from '../processes/process-store.ts';

/** What an {@link AdoptedStream} needs from the process manager. */
export interface AdoptedStreamHost {
  /** Puts a held process of the stream in the run queue; false when it is no longer waiting (killed). */
  release(pid: number): boolean;
  isIdle(pid: number): boolean;
  result(pid: number): Promise<ProcessResult | undefined>;
  emit(event: UnsequencedEvent, route: EventRoute): void;
  /** Keeps the store open until `work` settles, and logs its failure. */
  background(work: Promise<unknown>): void;
  readonly responsePipeBytes: number;
}

/**
 * The processes of a stream whose node stopped, taken over by this node of a cluster: its queued
 * processes run one after another in pid order (the stream's order), and once every process of the
 * stream is idle the stream's `stream.result` is sent with what they did. The model output the
 * stopped node had not turned into processes, and the blocks it rejected, are not known here.
 */
export class AdoptedStream {
  readonly streamId: string;
  readonly #host: AdoptedStreamHost;
  readonly #route: EventRoute;
  readonly #ref: string | undefined;
  /** Every process of the stream, in order. */
  readonly #pids: number[];
  /** Queued processes not started yet, in order. */
  readonly #waiting: number[];
  #current: number | undefined;
  #finished = false;

  /**
   * @param pids every process of the stream (idle ones included), in order
   * @param waiting its queued processes, to run one after another
   */
  constructor(
    host: AdoptedStreamHost,
    stream: { streamId: string; owner: string; ref?: string },
    pids: number[],
    waiting: number[],
  ) {
    this.#host = host;
    this.streamId = stream.streamId;
    this.#ref = stream.ref;
    this.#route = {
      owner: stream.owner,
      streamId: stream.streamId,
      ...(stream.ref !== undefined && { ref: stream.ref }),
    };
    this.#pids = [...pids].sort((a, b) => a - b);
    this.#waiting = [...waiting].sort((a, b) => a - b);
  }

  /** Starts the first waiting process, or sends the result when nothing is left to run. */
  start(): void {
    this.#next();
  }

  /** A process of the stream became idle here. */
  processIdle(pid: number): void {
    if (pid === this.#current) this.#current = undefined;
    this.#next();
  }

  #next(): void {
    while (this.#current === undefined && this.#waiting.length > 0) {
      const next = this.#waiting.shift()!;
      if (this.#host.release(next)) this.#current = next;
    }
    if (this.#finished || this.#current !== undefined) return;
    if (!this.#pids.every((pid) => this.#host.isIdle(pid))) return;
    this.#finished = true;
    this.#host.background(this.#sendResult());
  }

  /** Reads what the stream's processes did and emits `stream.result`. */
  async #sendResult(): Promise<void> {
    const results = (await Promise.all(this.#pids.map((pid) => this.#host.result(pid)))).filter(
      (r) => r !== undefined,
    );
    const processes: ProcessSnapshot[] = results.map(
      ({ outputs, stdout, stderr, truncated, ...snapshot }) => snapshot,
    );
    this.#host.emit(
      {
        type: 'stream.result',
        streamId: this.streamId,
        ...(this.#ref !== undefined && { ref: this.#ref }),
        processes,
        text: formatResults(results, { maxBytes: this.#host.responsePipeBytes }),
      },
      this.#route,
    );
  }
}
