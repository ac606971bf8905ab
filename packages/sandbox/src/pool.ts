import { availableParallelism } from 'node:os';
import { createEgressFetch, type EgressFetch, parseAllowNet } from './egress.ts';
import type { Execution, ExecutionRequest } from './execution.ts';
import { HostExecution } from './host-execution.ts';
import { resolveLimits, type SandboxLimits } from './limits.ts';
import type { WorkerMessage } from './protocol.ts';
import { SandboxError } from './sandbox-error.ts';
import { WorkerProcess } from './worker-process.ts';

/** Options of {@link createSandboxPool}. */
export interface SandboxPoolOptions {
  /** Worker processes (each runs one execution at a time). @default os.availableParallelism() */
  size?: number;
  /**
   * The hosts `fetch` may reach (egress is denied by default; an execution's `fetchGate` may allow
   * more), loopback, private and link-local ones included: `HOST` or `HOST:PORT` (`[IPV6]:PORT`),
   * matched against the URL's host or the resolved address. @default [] (nothing)
   */
  allowNet?: string[];
  /** Limits for every execution (each request may override them). @default DEFAULT_LIMITS */
  limits?: Partial<SandboxLimits>;
  /**
   * Executions a worker process runs before the pool replaces it with a fresh one (a replacement
   * is started at once; the old worker is ended). Bounds what a long-lived process accumulates,
   * the way process pools cap requests per child (see docs/sandbox.md, "Worker lifetime").
   * `Infinity` keeps workers for good. @default 100_000
   */
  maxExecutionsPerWorker?: number;
  /**
   * Resident set size (MB) past which a worker process is replaced after its current execution, the
   * way `maxExecutionsPerWorker` replaces it by count. isolated-vm's native memory (and V8's heap of
   * the worker itself) grows with what the programs did, notably after large outputs, and is not all
   * given back to the system. `Infinity` never replaces a worker for its memory. @default 384
   */
  maxWorkerRssMb?: number;
  /**
   * How runs are kept apart (docs/sandbox.md, "Isolation"): `context`, one isolate per trust domain
   * (`ExecutionRequest.trustDomain` and memory limit) in each worker, a fresh context per run, the
   * isolate retired after a run that was stopped (killed, timed out, out of memory), after
   * `maxRunsPerIsolate` runs or past `maxIsolateHeapMb`; `isolate`, a fresh isolate per run.
   * @default `MCI_ISOLATION` from the environment, else 'context'
   */
  isolation?: Isolation;
  /** `isolation: context`: runs of one isolate before it is retired. @default 200 */
  maxRunsPerIsolate?: number;
  /**
   * `isolation: context`: used heap (MB) of an isolate after a run past which it is retired.
   * @default half the run's memory limit
   */
  maxIsolateHeapMb?: number;
}

/** How the runs of a pool are kept apart; see {@link SandboxPoolOptions.isolation}. */
export type Isolation = 'context' | 'isolate';

/** Default of {@link SandboxPoolOptions.maxRunsPerIsolate}. */
export const DEFAULT_MAX_RUNS_PER_ISOLATE = 200;

/** Runs programs in sandbox worker processes; see {@link createSandboxPool}. */
export interface SandboxPool {
  /**
   * Starts (or queues, FIFO, when every worker is busy) one execution.
   *
   * @throws SandboxError `INVALID_REQUEST` / `INVALID_LIMIT` for a malformed request, `POOL_CLOSED`
   *   after {@link SandboxPool.close}. A program's own failure never throws: see `ExecutionResult`.
   */
  execute(request: ExecutionRequest): Execution;
  /** The number of worker processes. */
  readonly size: number;
  /** Cancels queued and running executions and ends the worker processes. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const LANGS: Record<string, 'ts' | 'js'> = { ts: 'ts', typescript: 'ts', js: 'js', javascript: 'js' };

/** Default of {@link SandboxPoolOptions.maxExecutionsPerWorker}. */
export const DEFAULT_MAX_EXECUTIONS_PER_WORKER = 100_000;

/** Default of {@link SandboxPoolOptions.maxWorkerRssMb}. */
export const DEFAULT_MAX_WORKER_RSS_MB = 384;

/** Workers that die before becoming ready this many times in a row stop the pool from respawning. */
const MAX_START_FAILURES = 3;

/**
 * Creates a pool of sandbox worker processes. Each worker is a Node child process (started with
 * `--no-node-snapshot`) that runs programs in isolated-vm isolates, one fresh isolate per execution;
 * tool calls and `fetch` come back to this process, which runs them. A worker that dies (an OOM
 * abort, a V8 fatal error, a SIGKILL after it stopped answering) fails its execution with a clear
 * error and is replaced.
 *
 * @throws SandboxError `INVALID_OPTION` / `INVALID_LIMIT` for bad options.
 */
export function createSandboxPool(options: SandboxPoolOptions = {}): SandboxPool {
  const size = options.size ?? availableParallelism();
  if (!Number.isSafeInteger(size) || size < 1) {
    throw new SandboxError('INVALID_OPTION', `size must be a positive integer, got ${String(size)}`);
  }
  const maxExecutions = options.maxExecutionsPerWorker ?? DEFAULT_MAX_EXECUTIONS_PER_WORKER;
  if (
    !(
      maxExecutions === Number.POSITIVE_INFINITY ||
      (Number.isSafeInteger(maxExecutions) && maxExecutions >= 1)
    )
  ) {
    throw new SandboxError(
      'INVALID_OPTION',
      `maxExecutionsPerWorker must be a positive integer or Infinity, got ${String(maxExecutions)}`,
    );
  }
  const maxRssMb = options.maxWorkerRssMb ?? DEFAULT_MAX_WORKER_RSS_MB;
  if (!(maxRssMb === Number.POSITIVE_INFINITY || (Number.isSafeInteger(maxRssMb) && maxRssMb >= 1))) {
    throw new SandboxError(
      'INVALID_OPTION',
      `maxWorkerRssMb must be a positive integer or Infinity, got ${String(maxRssMb)}`,
    );
  }
  // Frozen: executions without limits of their own share it.
  const limits = Object.freeze(resolveLimits(options.limits));
  const isolation = options.isolation ?? (process.env.MCI_ISOLATION as Isolation | undefined) ?? 'context';
  if (isolation !== 'context' && isolation !== 'isolate') {
    throw new SandboxError(
      'INVALID_OPTION',
      `isolation must be context or isolate, got ${String(isolation)}`,
    );
  }
  const maxRuns = options.maxRunsPerIsolate ?? DEFAULT_MAX_RUNS_PER_ISOLATE;
  const maxHeapMb = options.maxIsolateHeapMb;
  for (const [name, value] of [
    ['maxRunsPerIsolate', maxRuns],
    ['maxIsolateHeapMb', maxHeapMb ?? 1],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 1)
      throw new SandboxError('INVALID_OPTION', `${name} must be a positive integer, got ${String(value)}`);
  }
  const egress = createEgressFetch(parseAllowNet(options.allowNet));
  return new Pool(size, limits, egress, {
    maxExecutions,
    maxRssBytes: maxRssMb * 1024 * 1024,
    ...(isolation === 'context' && { reuse: { maxRuns, ...(maxHeapMb !== undefined && { maxHeapMb }) } }),
  });
}

/** When workers and isolates are replaced. */
interface Recycle {
  maxExecutions: number;
  maxRssBytes: number;
  /** `isolation: context`: when a trust domain's isolate is retired. */
  reuse?: { maxRuns: number; maxHeapMb?: number };
}

class Pool implements SandboxPool {
  readonly size: number;
  readonly #limits: SandboxLimits;
  readonly #egress: EgressFetch;
  readonly #workers = new Set<WorkerProcess>();
  readonly #running = new Map<WorkerProcess, HostExecution | undefined>();
  readonly #queue: HostExecution[] = [];
  readonly #recycle: Recycle;
  /** Executions each worker has finished (see {@link SandboxPoolOptions.maxExecutionsPerWorker}). */
  readonly #executions = new WeakMap<WorkerProcess, number>();
  /** Workers ended for their execution count or memory: their exit needs no replacement. */
  readonly #retired = new WeakSet<WorkerProcess>();
  #nextId = 0;
  #startFailures = 0;
  #startError = '';
  #closed = false;

  constructor(size: number, limits: SandboxLimits, egress: EgressFetch, recycle: Recycle) {
    this.size = size;
    this.#recycle = recycle;
    this.#limits = limits;
    this.#egress = egress;
    for (let i = 0; i < size; i++) this.#spawn();
  }

  execute(request: ExecutionRequest): Execution {
    if (this.#closed) throw new SandboxError('POOL_CLOSED', 'The sandbox pool is closed');
    if (typeof request !== 'object' || request === null || typeof request.code !== 'string') {
      throw new SandboxError('INVALID_REQUEST', 'request.code must be a string');
    }
    const lang = LANGS[(request.lang ?? 'ts').toLowerCase()];
    if (!lang) {
      throw new SandboxError(
        'INVALID_REQUEST',
        `request.lang must be ts, typescript, js or javascript, got "${request.lang}"`,
      );
    }
    const limits =
      request.limits === undefined && request.timeoutMs === undefined && request.memoryLimitMb === undefined
        ? this.#limits
        : resolveLimits(this.#limits, request.limits, {
            timeoutMs: request.timeoutMs,
            memoryLimitMb: request.memoryLimitMb,
          });
    const reuse = this.#recycle.reuse;
    const execution = new HostExecution(++this.#nextId, request, lang, limits, {
      egress: this.#egress,
      ...(reuse && {
        reuse: {
          maxRuns: reuse.maxRuns,
          maxHeapMb: reuse.maxHeapMb ?? Math.max(1, Math.floor(limits.memoryLimitMb / 2)),
        },
      }),
      dequeue: (e) => {
        const i = this.#queue.indexOf(e);
        if (i !== -1) this.#queue.splice(i, 1);
        this.#updateRefs();
      },
    });
    this.#queue.push(execution);
    if (this.#startFailures >= MAX_START_FAILURES) {
      // Workers could not start: try again for this request, once.
      this.#startFailures = MAX_START_FAILURES - 1;
      while (this.#workers.size < this.size) this.#spawn();
    }
    this.#dispatch();
    return execution;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const execution of this.#queue.splice(0)) execution.kill();
    for (const execution of this.#running.values()) execution?.kill();
    const exits = [...this.#workers].map((worker) => {
      worker.setRef(true);
      worker.kill();
      return worker.exited();
    });
    await Promise.all(exits);
    await this.#egress.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #spawn(): void {
    const worker = new WorkerProcess({
      onReady: () => {
        this.#startFailures = 0;
        this.#running.set(worker, undefined);
        this.#dispatch();
      },
      onWarm: () => this.#dispatch(),
      onMessage: (w, message) => this.#onMessage(w, message),
      onExit: (w, reason) => this.#onExit(w, reason),
    });
    this.#workers.add(worker);
    worker.setRef(this.#queue.length > 0 || [...this.#running.values()].some(Boolean));
  }

  #onMessage(worker: WorkerProcess, message: Exclude<WorkerMessage, { type: 'ready' | 'warm' }>): void {
    const execution = this.#running.get(worker);
    execution?.onWorkerMessage(message);
    if (message.type === 'done' && execution?.id === message.id) {
      const executions = (this.#executions.get(worker) ?? 0) + 1;
      this.#executions.set(worker, executions);
      if (executions >= this.#recycle.maxExecutions || message.rssBytes > this.#recycle.maxRssBytes) {
        this.#retire(worker);
      } else this.#running.set(worker, undefined);
      this.#dispatch();
    }
  }

  /** Ends an idle worker that has run its share of executions or memory, and starts its replacement. */
  #retire(worker: WorkerProcess): void {
    this.#retired.add(worker);
    this.#running.delete(worker);
    this.#workers.delete(worker);
    worker.kill();
    if (!this.#closed) this.#spawn();
  }

  #onExit(worker: WorkerProcess, reason: string): void {
    const execution = this.#running.get(worker);
    this.#running.delete(worker);
    this.#workers.delete(worker);
    execution?.workerExited(reason);
    if (this.#closed || this.#retired.has(worker)) return;
    if (worker.failedToStart) {
      this.#startError = reason;
      if (++this.#startFailures >= MAX_START_FAILURES) {
        for (const queued of this.#queue.splice(0)) {
          queued.failToStart(`Sandbox workers fail to start (the last one ${this.#startError})`);
        }
        this.#updateRefs();
        return;
      }
    }
    this.#spawn();
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      const domain = this.#recycle.reuse ? this.#queue[0]!.domain : undefined;
      // An idle worker that holds the run's trust domain starts it in a fresh context; one whose next
      // isolate is built starts it at once; any other first builds it.
      let chosen: WorkerProcess | undefined;
      let chosenHolds = false;
      for (const [worker, execution] of this.#running) {
        if (execution || !worker.alive) continue;
        const holds = domain !== undefined && worker.domains.includes(domain);
        if (holds && !chosenHolds) {
          chosen = worker;
          chosenHolds = true;
          continue;
        }
        if (chosenHolds) continue;
        if (!chosen || (worker.warm && !chosen.warm)) chosen = worker;
      }
      if (!chosen) break;
      const execution = this.#queue.shift()!;
      this.#running.set(chosen, execution);
      execution.start(chosen);
    }
    this.#updateRefs();
  }

  // Idle workers must not keep the host process alive: a CLI that forgets `close()` still exits.
  // Once closed, every worker stays referenced until it has exited (see `close`).
  #updateRefs(): void {
    if (this.#closed) return;
    for (const worker of this.#workers) {
      worker.setRef(this.#queue.length > 0 || Boolean(this.#running.get(worker)));
    }
  }
}
