import { deserialize } from 'node:v8';
import type { EgressFetch } from './egress.ts';
import { EgressDenied, fetchErrorMessage } from './egress.ts';
import type {
  Execution,
  ExecutionError,
  ExecutionRequest,
  ExecutionResult,
  ExecutionStatus,
  FetchSendOptions,
  SandboxEvent,
  SandboxEventData,
} from './execution.ts';
import { failureText } from './failure-text.ts';
import { HostCalls } from './host-calls.ts';
import type { SandboxLimits } from './limits.ts';
import type { WorkerEvent, WorkerMessage } from './protocol.ts';
import type { RunFile } from './run-file.ts';
import type { WorkerProcess } from './worker-process.ts';

/** How long `kill()` waits for the worker's own report (with CPU and heap figures) before resolving. */
const KILL_ACK_MS = 25;
/** The host's own deadline trails the worker's by this much, so the worker normally reports first. */
const DEADLINE_GRACE_MS = 250;
/** How long a stopped worker may take to confirm before it is presumed stuck and SIGKILLed. */
const STUCK_WORKER_MS = 250;

/** What a host execution needs from the pool. */
export interface ExecutionHost {
  egress: EgressFetch;
  /** `isolation: context`: the retirement rules of a trust domain's isolate. Absent: a fresh isolate per run. */
  reuse?: { maxRuns: number; maxHeapMb: number };
  /** A queued execution was killed: take it out of the queue. */
  dequeue(execution: HostExecution): void;
}

const CANCELED: ExecutionError = { name: 'CanceledError', message: 'The execution was killed' };
const timedOut = (ms: number): ExecutionError => ({
  name: 'TimeoutError',
  message: `Execution timed out after ${ms} ms`,
});

/**
 * One execution on the host side: queued, then running on a worker, then ended. Numbers and
 * delivers events, runs tool calls and fetches for the sandbox, enforces the wall-clock timeout, and
 * builds the {@link ExecutionResult}. The result resolves exactly once.
 */
export class HostExecution implements Execution {
  readonly result: Promise<ExecutionResult>;
  readonly id: number;
  readonly limits: SandboxLimits;
  readonly #request: ExecutionRequest;
  readonly #lang: 'ts' | 'js';
  readonly #host: ExecutionHost;
  readonly #calls: HostCalls;
  #resolve!: (result: ExecutionResult) => void;
  #state: 'queued' | 'running' | 'ended' = 'queued';
  #worker: WorkerProcess | undefined;
  #stopping: { status: 'canceled' | 'timeout'; error: ExecutionError } | undefined;
  #deadline: NodeJS.Timeout | undefined;
  #ackTimer: NodeJS.Timeout | undefined;
  #stuckTimer: NodeJS.Timeout | undefined;
  #startedAt = 0;
  #seq = 0;
  #outputs: unknown[] = [];
  #files: RunFile[] = [];
  #stdout = '';
  #stderr = '';
  #outputDropped = false;

  constructor(
    id: number,
    request: ExecutionRequest,
    lang: 'ts' | 'js',
    limits: SandboxLimits,
    host: ExecutionHost,
  ) {
    this.id = id;
    this.#request = request;
    this.#lang = lang;
    this.limits = limits;
    this.#host = host;
    this.result = new Promise((resolve) => (this.#resolve = resolve));
    this.#calls = new HostCalls(request.tools, limits, request.state);
  }

  /** The trust domain whose isolate runs it (`isolation: context`). */
  get domain(): string {
    return this.#request.trustDomain ?? '';
  }

  get state(): 'queued' | 'running' | 'ended' {
    return this.#state;
  }

  kill(): void {
    if (this.#state === 'queued') {
      this.#host.dequeue(this);
      this.#end('canceled', CANCELED, {});
    } else if (this.#state === 'running') {
      this.#stop('canceled', CANCELED);
    }
  }

  /** Fails a queued execution that no worker can run. */
  failToStart(message: string): void {
    if (this.#state === 'queued') this.#end('failed', { name: 'SandboxError', message }, {});
  }

  /** Runs the execution on `worker` (which the pool has marked busy). */
  start(worker: WorkerProcess): void {
    this.#state = 'running';
    this.#worker = worker;
    this.#startedAt = performance.now();
    const { timeoutMs, memoryLimitMb, maxOutputBytes, maxLogBytes } = this.limits;
    const sent = worker.send({
      type: 'execute',
      id: this.id,
      code: this.#request.code,
      lang: this.#lang,
      tools: this.#calls.names,
      ...(this.#request.skills && { skills: { ...this.#request.skills.sources } }),
      limits: { timeoutMs, memoryLimitMb, maxOutputBytes, maxLogBytes },
      ...(this.#request.randomSeed !== undefined && { seed: this.#request.randomSeed }),
      ...(this.#host.reuse && { reuse: { domain: this.domain, ...this.#host.reuse } }),
    });
    if (this.#host.reuse) worker.ranDomain(this.domain);
    // The worker enforces the deadline (and reports CPU and heap figures); this one covers a worker
    // that stopped answering.
    this.#deadline = setTimeout(
      () => this.#stop('timeout', timedOut(timeoutMs)),
      timeoutMs + DEADLINE_GRACE_MS,
    );
    if (!sent) this.workerExited('lost its IPC channel');
  }

  /** A message from this execution's worker. */
  onWorkerMessage(message: Exclude<WorkerMessage, { type: 'ready' | 'warm' }>): void {
    if (message.type === 'done') clearTimeout(this.#stuckTimer);
    if (this.#state !== 'running') return;
    switch (message.type) {
      case 'events':
        // Events still in flight when a kill arrives were produced before it: keep them.
        for (const event of message.events) this.#emitWorkerEvent(event);
        return;
      case 'tool':
        if (this.#stopping) return;
        this.#calls.tool(message.name, message.props, (ok, value, event) => {
          if (this.#stopping || this.#state !== 'running') return;
          if (event) this.#emit({ type: 'tool', ...event });
          this.#settle(message.callId, ok, value);
        });
        return;
      case 'catalog':
        if (this.#stopping) return;
        this.#calls.catalog(message.op, message.args, (ok, value) => this.#settle(message.callId, ok, value));
        return;
      case 'state':
        if (this.#stopping) return;
        this.#calls.state(message.op, message.args, (ok, value) => this.#settle(message.callId, ok, value));
        return;
      case 'skill': {
        if (this.#stopping) return;
        const { callId, op, args } = message;
        const skills = this.#request.skills;
        const done = (ok: boolean, value: unknown) => this.#settle(callId, ok, value);
        if (!skills) {
          done(false, { name: 'TypeError', message: 'skills are not available in this execution' });
          return;
        }
        Promise.resolve()
          .then(() => (op === 'save' ? skills.save(args[0]) : skills.checkInput(String(args[0]), args[1])))
          .then(
            (value) => done(true, op === 'save' ? value : undefined),
            (error: unknown) => {
              const code = (error as { code?: unknown } | null)?.code;
              done(false, {
                name: error instanceof TypeError ? 'TypeError' : 'Error',
                message: error instanceof Error ? error.message : String(error),
                ...(typeof code === 'string' && { code }),
              });
            },
          );
        return;
      }
      case 'fetch': {
        if (this.#stopping) return;
        const { callId, request } = message;
        const done = (ok: boolean, value: unknown) => this.#settle(callId, ok, value);
        const gate = this.#request.fetchGate;
        this.#calls.fetch((signal) => {
          let sent = false;
          const send = (options: FetchSendOptions = {}) => {
            sent = true;
            return this.#host.egress.fetch(options.request ?? request, {
              signal,
              maxResponseBytes: this.limits.maxFetchResponseBytes,
              ...(options.allow && { allow: options.allow }),
              ...(options.hostBound && { hostBound: options.hostBound }),
            });
          };
          return (gate ? gate.fetch(request, send) : send()).then(
            (response) => done(true, response),
            (error: unknown) => {
              // A refusal (the gate's own, or the egress policy's) says why in `code`, in its own words.
              const code = (error as { code?: unknown } | null)?.code;
              done(
                false,
                typeof code === 'string' && (!sent || error instanceof EgressDenied)
                  ? { name: 'TypeError', message: (error as Error).message, code }
                  : { name: 'TypeError', message: fetchErrorMessage(error) },
              );
            },
          );
        }, done);
        return;
      }
      case 'done': {
        if (message.events) for (const event of message.events) this.#emitWorkerEvent(event);
        const stopped = this.#stopping;
        this.#end(stopped?.status ?? message.status, stopped?.error ?? message.error, {
          ...message,
          isolate: { id: `${this.#worker?.pid}:${message.isolate.id}`, run: message.isolate.run },
        });
        return;
      }
    }
  }

  /** The worker died under this execution (crash, OOM abort, SIGKILL). */
  workerExited(reason: string): void {
    clearTimeout(this.#stuckTimer);
    if (this.#state !== 'running') return;
    const stopped = this.#stopping;
    this.#end(
      stopped?.status ?? 'failed',
      stopped?.error ?? {
        name: 'SandboxError',
        message:
          `The sandbox worker process ${reason}. The execution is lost (a replacement worker is starting); ` +
          'this happens when a program exhausts memory in a way the isolate limit cannot catch.',
      },
      {},
    );
  }

  #settle(callId: number, ok: boolean, value: unknown): void {
    if (this.#state !== 'running' || this.#stopping) return;
    const sent = this.#worker!.send({ type: 'settle', id: this.id, callId, ok, value });
    if (!sent && ok) {
      // The value could not be serialized (a tool returned something odd): reject the call instead.
      this.#worker!.send({
        type: 'settle',
        id: this.id,
        callId,
        ok: false,
        value: { name: 'TypeError', message: 'The tool result could not be copied' },
      });
    }
  }

  /** Kill or timeout: stop host-side work now, tell the worker, and make sure the result resolves. */
  #stop(status: 'canceled' | 'timeout', error: ExecutionError): void {
    if (this.#state !== 'running' || this.#stopping) return;
    this.#stopping = { status, error };
    this.#calls.stop();
    const worker = this.#worker!;
    worker.send({ type: 'kill', id: this.id, status });
    this.#ackTimer = setTimeout(() => this.#end(status, error, {}), KILL_ACK_MS);
    // A worker that does not confirm is stuck (its event loop blocked): kill it; the pool replaces it.
    this.#stuckTimer = setTimeout(() => worker.kill(), STUCK_WORKER_MS);
  }

  #emitWorkerEvent(event: WorkerEvent): void {
    if (event.type === 'output') {
      let value: unknown;
      if ('value' in event) value = event.value;
      else {
        try {
          value = 'json' in event ? JSON.parse(event.json) : deserialize(event.serialized);
        } catch {
          // What the worker's serializer or the isolate's JSON.stringify wrote never fails here; a
          // worker that sent anything else is not trusted with this output.
          this.#outputDropped = true;
          return;
        }
      }
      this.#outputs.push(value);
      this.#emit({ type: 'output', value });
    } else if (event.type === 'file') {
      const { name, mimeType, data } = event;
      this.#files.push({ name, mimeType, data });
      this.#emit({ type: 'file', name, mimeType, data });
    } else {
      if (event.stream === 'stderr') this.#stderr += event.text;
      else this.#stdout += event.text;
      this.#emit(event);
    }
  }

  #emit(event: SandboxEventData): void {
    const onEvent = this.#request.onEvent;
    if (!onEvent) return;
    try {
      onEvent({ seq: ++this.#seq, ...event } as SandboxEvent);
    } catch {
      // A throwing listener must not break the execution (documented on `onEvent`).
    }
  }

  #end(
    status: ExecutionStatus,
    error: ExecutionError | undefined,
    figures: {
      cpuTimeMs?: number;
      heapUsedBytes?: number;
      truncated?: boolean;
      isolate?: { id: string; run: number };
    },
  ): void {
    if (this.#state === 'ended') return;
    const wasRunning = this.#state === 'running';
    this.#state = 'ended';
    this.#calls.stop();
    clearTimeout(this.#deadline);
    clearTimeout(this.#ackTimer);
    // Why the run did not succeed, as the last stderr event, for clients that read only stderr.
    const why = failureText(
      status,
      error,
      this.limits.timeoutMs,
      this.#lang === 'ts' ? 'snippet.ts' : 'snippet.js',
    );
    if (why) {
      this.#stderr += why;
      this.#emit({ type: 'log', stream: 'stderr', text: why });
    }
    const result: ExecutionResult = {
      status,
      outputs: this.#outputs,
      stdout: this.#stdout,
      stderr: this.#stderr,
      durationMs: wasRunning ? performance.now() - this.#startedAt : 0,
      cpuTimeMs: figures.cpuTimeMs ?? 0,
      heapUsedBytes: figures.heapUsedBytes ?? 0,
    };
    if (error) result.error = error;
    if (this.#files.length > 0) result.files = this.#files;
    if (figures.truncated || this.#outputDropped) result.truncated = true;
    if (figures.isolate && figures.isolate.run > 0) result.isolate = figures.isolate;
    this.#resolve(result);
  }
}
