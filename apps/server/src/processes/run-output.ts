import type { Redactor } from '@mci/schema';
import {
  type CallSummary,
  type DistributiveOmit,
  encodeOutputValue,
  type FileOutput,
  runFileUri,
  type ServerEvent,
} from '@mci/protocol';
import type { RunFile } from '@mci/sandbox';
import type { LiveProcess } from './live-process.ts';
import type { SandboxEventBody } from './process-manager-types.ts';
import type { StatsCounters } from './process-stats.ts';
import type { EventRoute, ProcessStore, StoredProcess } from './process-store.ts';
import {
  type DroppedOutput,
  fitText,
  MAX_OUTPUT_EVENTS_PER_RUN,
  truncationNote,
} from './run-output-limits.ts';
import { wireDuration } from './snapshots.ts';

/**
 * Sandbox events one run delivers (stores and sends) per event-loop turn; the rest wait for the next
 * turn, so a flood arriving in one burst never holds the event loop for its whole length and requests
 * (`/healthz`, other clients) are served between the slices.
 */
export const EVENTS_PER_TURN = 256;

/** A sandbox event waiting for delivery; a tool call's event carries the call's record summary. */
export type QueuedEvent =
  | SandboxEventBody
  | (Extract<SandboxEventBody, { type: 'tool' }> & { call?: CallSummary });

/** What delivering a run's events needs from the manager. */
export interface OutputHooks {
  store: ProcessStore;
  stats: StatsCounters;
  /** Emits an event; `persist(seq)` runs before listeners see it. */
  emit(event: DistributiveOmit<ServerEvent, 'seq'>, route: EventRoute, persist?: (seq: number) => void): void;
  /** Bytes of outputs and logs one run may deliver per second (bursts of twice that). */
  outputBytesPerSecond: number;
  /** Takes the server's secret values out of outputs, logs and files before they are stored or sent. */
  redactor?: Redactor | undefined;
}

/** Reads a file's bytes as text, refusing anything that is not UTF-8. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Delivers the sandbox events of runs: stores and sends their outputs, logs, files and tool calls,
 * in order, within each run's limits (event count, bytes per second), skipping what an earlier
 * attempt of a resumed run delivered.
 */
export class RunOutput {
  readonly #hooks: OutputHooks;
  readonly #drained: (live: LiveProcess) => void;

  /** @param drained called when the queue of a run that has its result is empty. */
  constructor(hooks: OutputHooks, drained: (live: LiveProcess) => void) {
    this.#hooks = hooks;
    this.#drained = drained;
  }

  /**
   * Queues a sandbox event. The queue is delivered from the next event-loop turn on, at most
   * {@link EVENTS_PER_TURN} events per turn, adjacent log texts of one stream in a slice joined into
   * one event (order kept), so a console flood costs one event per slice.
   */
  queue(live: LiveProcess, sandboxEvent: SandboxEventBody): void {
    // A tool call's record is the one that settled just before its event.
    let event: QueuedEvent = sandboxEvent;
    if (sandboxEvent.type === 'tool') {
      const call = live.audit?.claimToolCall(sandboxEvent.name);
      if (call) event = { ...sandboxEvent, call };
    }
    // Once a run stops to ask, what it does until it stops (the kill's own stderr line included) is
    // not delivered: the resumed run does it again.
    if (live.done || !live.received || live.asked) return;
    if (live.queue) {
      live.queue.events.push(event);
      return;
    }
    live.queue = { events: [event], next: 0 };
    setImmediate(() => this.#flush(live));
  }

  /** Delivers the next slice of the queued events of `live`; ends the run once all are out and it has ended. */
  #flush(live: LiveProcess): void {
    const queue = live.queue;
    if (!queue) return;
    const end = Math.min(queue.events.length, queue.next + EVENTS_PER_TURN);
    let log: { stream: 'stdout' | 'stderr'; parts: string[] } | undefined;
    const endLog = () => {
      if (log) this.deliver(live, { type: 'log', stream: log.stream, text: log.parts.join('') });
      log = undefined;
    };
    for (let i = queue.next; i < end; i++) {
      const event = queue.events[i]!;
      if (event.type === 'log') {
        if (log?.stream !== event.stream) {
          endLog();
          log = { stream: event.stream, parts: [] };
        }
        log.parts.push(event.text);
        continue;
      }
      endLog();
      this.deliver(live, event);
    }
    endLog();
    queue.next = end;
    if (end < queue.events.length) {
      setImmediate(() => this.#flush(live));
      return;
    }
    live.queue = undefined;
    if (live.result) this.#drained(live);
  }

  /** Delivers one event of `live` (stores and sends it, within the run's limits). */
  deliver(live: LiveProcess, event: QueuedEvent): void {
    if (live.done || !live.received) return;
    const { pid } = live.record;
    const { run } = live.run;
    const route = routeOf(live.record);
    switch (event.type) {
      case 'output': {
        live.received.outputs++;
        // Delivered by an earlier attempt of this run (a resumed run replays its program).
        if (live.received.outputs <= (live.replay?.delivered.outputs ?? 0)) break;
        if ((live.delivered ?? 0) >= MAX_OUTPUT_EVENTS_PER_RUN) {
          this.#dropped(live, 'overCount').outputs++;
          break;
        }
        // One encoding from here on: the store, the events and every interface carry this JSON.
        const value = this.redactValue(encodeOutputValue(event.value));
        if (live.budget && !live.budget.take(Buffer.byteLength(JSON.stringify(value) ?? ''))) {
          this.#dropped(live, 'overRate').outputs++;
          break;
        }
        live.delivered = (live.delivered ?? 0) + 1;
        this.#hooks.emit({ type: 'output', pid, run, ...wireRoute(route), value }, route, (seq) =>
          this.#hooks.store.appendOutput(pid, run, seq, value),
        );
        break;
      }
      case 'log': {
        const skip = (live.replay?.delivered[event.stream] ?? 0) - live.received[event.stream];
        live.received[event.stream] += event.text.length;
        const text = this.#fitLog(live, skip > 0 ? event.text.slice(skip) : event.text);
        if (text !== '') this.emitLog(live, event.stream, text);
        break;
      }
      case 'file':
        this.deliverFile(live, event);
        break;
      case 'tool':
        live.toolEvents = (live.toolEvents ?? 0) + 1;
        if (live.toolEvents <= (live.replay?.delivered.tools ?? 0)) break;
        this.#hooks.stats.toolCalls++;
        if (event.isError) this.#hooks.stats.toolErrors++;
        this.#hooks.emit(
          {
            type: 'tool',
            pid,
            run,
            ...wireRoute(route),
            name: event.name,
            durationMs: wireDuration(event.durationMs),
            isError: event.isError,
            ...('call' in event && event.call && { call: event.call }),
          },
          route,
        );
        break;
    }
  }

  /**
   * Stores a file the program made and delivers the output value that points at it
   * (`{type: 'file', name, mimeType, size, uri}`; see `FileOutput`). The bytes count against the
   * sandbox's output limit, not the byte rate: they are stored, not sent to subscribers.
   */
  deliverFile(live: LiveProcess, file: RunFile): void {
    live.files ??= new Set();
    if (live.files.has(file.name)) return;
    live.files.add(file.name);
    // Delivered by an earlier attempt of this run (a resumed run makes its files again, in order).
    if (live.files.size <= (live.replay?.delivered.files ?? 0)) return;
    if ((live.delivered ?? 0) >= MAX_OUTPUT_EVENTS_PER_RUN) {
      this.#dropped(live, 'overCount').outputs++;
      return;
    }
    const { pid } = live.record;
    const { run } = live.run;
    const route = routeOf(live.record);
    const data = this.#redactFile(file.data);
    const value: FileOutput = {
      type: 'file',
      name: file.name,
      mimeType: file.mimeType,
      size: data.byteLength,
      uri: runFileUri(pid, run, file.name),
    };
    live.delivered = (live.delivered ?? 0) + 1;
    this.#hooks.store.putFile(pid, run, { name: file.name, mimeType: file.mimeType, data });
    this.#hooks.emit({ type: 'output', pid, run, ...wireRoute(route), value }, route, (seq) =>
      this.#hooks.store.appendOutput(pid, run, seq, value),
    );
  }

  /**
   * The bytes of a file with the server's secrets taken out when they are UTF-8 text; other bytes
   * (pictures, archives) are kept as they are.
   */
  #redactFile(data: Uint8Array): Uint8Array {
    const redactor = this.#hooks.redactor;
    if (!redactor) return data;
    let text: string;
    try {
      text = UTF8.decode(data);
    } catch {
      return data;
    }
    const redacted = redactor.redact(text);
    return redacted === text ? data : Buffer.from(redacted);
  }

  /** Records a drop of `live` for `reason`: the run is truncated. */
  #dropped(live: LiveProcess, reason: 'overRate' | 'overCount'): DroppedOutput {
    live.run.truncated = true;
    live.dropped ??= { outputs: 0, logBytes: 0, overRate: false, overCount: false };
    live.dropped[reason] = true;
    return live.dropped;
  }

  /** The longest start of `text` the run's byte budget takes; the rest is dropped. */
  #fitLog(live: LiveProcess, text: string): string {
    if (!live.budget) return text;
    const fitted = fitText(live.budget, text);
    if (fitted.droppedBytes > 0) this.#dropped(live, 'overRate').logBytes += fitted.droppedBytes;
    return fitted.text;
  }

  /** Stores and sends a log text of `live`, redacted. */
  emitLog(live: LiveProcess, stream: 'stdout' | 'stderr', raw: string): void {
    const text = this.#hooks.redactor ? this.#hooks.redactor.redact(raw) : raw;
    const { pid } = live.record;
    const { run } = live.run;
    const route = routeOf(live.record);
    this.#hooks.emit({ type: 'log', pid, run, ...wireRoute(route), stream, text }, route, (seq) =>
      this.#hooks.store.appendLog(pid, run, seq, stream, text),
    );
  }

  /** Ends the stderr of a run that lost outputs or logs to the server's limits with a note saying so. */
  noteDropped(live: LiveProcess): void {
    if (live.dropped)
      this.emitLog(live, 'stderr', truncationNote(live.dropped, this.#hooks.outputBytesPerSecond));
  }

  /** `value` with the server's secrets taken out. */
  redactValue<T>(value: T): T {
    return this.#hooks.redactor ? this.#hooks.redactor.redactValue(value) : value;
  }
}

/** The `ref` and `streamId` an `output`, `log` or `tool` event carries (those the process has). */
export function wireRoute(route: EventRoute): { ref?: string; streamId?: string } {
  return {
    ...(route.ref !== undefined && { ref: route.ref }),
    ...(route.streamId !== undefined && { streamId: route.streamId }),
  };
}

/** The route of a process's events. */
export function routeOf(record: StoredProcess): EventRoute {
  const route: EventRoute = { owner: record.owner, pid: record.pid };
  if (record.ref !== undefined) route.ref = record.ref;
  if (record.metadata?.streamId !== undefined) route.streamId = record.metadata.streamId;
  return route;
}
