import { type ServerEvent, toJson } from '@mci/protocol';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { ProgressToken, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { ProcessManager } from '../processes/process-manager-types.ts';
import { taskOf } from './process-task.ts';

/** Longest progress message, in characters (an output's JSON is cut past it). */
const MAX_MESSAGE_CHARS = 1000;

/** What to relay for one process. */
export interface RelayTarget {
  /** The call's `_meta.progressToken`: each output and console line becomes a progress notification. */
  progressToken?: ProgressToken | undefined;
  /** The request a synchronous call's notifications belong to (its HTTP response stream). */
  relatedRequestId?: RequestId;
  /** A task-augmented call: every state change becomes a `notifications/tasks/status`. */
  task?: { ttl: number };
}

interface Watch extends RelayTarget {
  progress: number;
}

/** Events of processes not watched yet, kept from {@link ProgressRelay.hold} until a watch takes them. */
export type HeldEvents = ServerEvent[];

const cut = (text: string) =>
  text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)}… (${text.length} chars)` : text;

/**
 * Turns the process events of watched processes into MCP notifications on one server: progress
 * (`output: <json>`, `stdout: <line>`, `stderr: <line>`, numbered from 1 in event order) and task
 * status. A watch of a task ends when its process is idle; a synchronous call ends its own.
 * @see https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/progress
 */
export class ProgressRelay {
  readonly #server: Server;
  readonly #logger: Logger | undefined;
  readonly #watches = new Map<number, Watch>();
  readonly #holds = new Set<HeldEvents>();
  readonly #unsubscribe: () => void;

  constructor(options: { manager: ProcessManager; server: Server; logger?: Logger }) {
    this.#server = options.server;
    this.#logger = options.logger;
    this.#unsubscribe = options.manager.onEvent((event) => {
      if (!('pid' in event) || event.pid === undefined) return;
      if (this.#watches.has(event.pid)) this.#relay(event.pid, event);
      else for (const held of this.#holds) held.push(event);
    });
  }

  /**
   * Starts keeping the events of processes not watched yet, for a process being created (its pid is
   * known once its creation is committed): pass the result to {@link ProgressRelay.watch}, or to
   * {@link ProgressRelay.release} when the creation failed.
   */
  hold(): HeldEvents {
    const held: HeldEvents = [];
    this.#holds.add(held);
    return held;
  }

  /** Stops keeping events for `held`. */
  release(held: HeldEvents): void {
    this.#holds.delete(held);
  }

  /** Starts relaying the events of `pid`, first those of it in `held` (which is released). */
  watch(pid: number, target: RelayTarget, held?: HeldEvents): void {
    if (held) this.release(held);
    if (target.progressToken === undefined && !target.task) return;
    this.#watches.set(pid, { ...target, progress: 0 });
    for (const event of held ?? []) if ('pid' in event && event.pid === pid) this.#relay(pid, event);
  }

  /** Relays one event of watched process `pid`. */
  #relay(pid: number, event: ServerEvent): void {
    const watch = this.#watches.get(pid);
    if (!watch) return;
    if (event.type === 'output') this.#progress(watch, `output: ${cut(toJson(event.value))}`);
    else if (event.type === 'log') {
      const lines = event.text.endsWith('\n') ? event.text.slice(0, -1) : event.text;
      for (const line of lines.split('\n')) this.#progress(watch, `${event.stream}: ${cut(line)}`);
    } else if (event.type === 'process' && watch.task) {
      this.#send({ method: 'notifications/tasks/status', params: taskOf(event, watch.task.ttl) }, watch);
      if (event.state === 'idle') this.#watches.delete(pid);
    }
  }

  /** Stops relaying the events of `pid`; returns how many progress notifications were sent for it. */
  unwatch(pid: number): number {
    const sent = this.#watches.get(pid)?.progress ?? 0;
    this.#watches.delete(pid);
    return sent;
  }

  /** Stops relaying anything. */
  close(): void {
    this.#unsubscribe();
    this.#watches.clear();
    this.#holds.clear();
  }

  #progress(watch: Watch, message: string): void {
    if (watch.progressToken === undefined) return;
    watch.progress += 1;
    this.#send(
      {
        method: 'notifications/progress',
        params: { progressToken: watch.progressToken, progress: watch.progress, message },
      },
      watch,
    );
  }

  #send(notification: Parameters<Server['notification']>[0], watch: Watch): void {
    const options =
      watch.relatedRequestId === undefined ? undefined : { relatedRequestId: watch.relatedRequestId };
    this.#server.notification(notification, options).catch((error: unknown) => {
      this.#logger?.debug({ err: error, method: notification.method }, 'MCP notification not sent');
    });
  }
}
