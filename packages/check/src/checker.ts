import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import type { CheckDeclarations, CheckLanguage, CheckReport, SkillReport } from './check-types.ts';
import type { CheckerReply, CheckerRequest } from './checker-protocol.ts';

const WORKER_URL = new URL(
  import.meta.url.endsWith('.ts') ? './check-worker.ts' : './check-worker.js',
  import.meta.url,
);

/** Options of {@link createChecker}. */
export interface CheckerOptions {
  /** What programs are checked against; replace it later with {@link Checker.setDeclarations}. */
  declarations: CheckDeclarations;
  /**
   * Longest one check may take, in ms, counted once the worker is warm (its start-up does not count;
   * see `startTimeoutMs`). Past it the check rejects with `CheckError` `CHECK_TIMEOUT` and the worker
   * is replaced (the compiler may be stuck in that program). @default 5000
   */
  timeoutMs?: number;
  /**
   * Longest the worker may take to start and warm up, in ms; past it waiting checks reject with
   * `CHECK_UNAVAILABLE`. @default 60000
   */
  startTimeoutMs?: number;
}

/** Why a check gave no report: `CHECK_TIMEOUT`, `CHECK_UNAVAILABLE` (the worker failed) or `CHECK_CLOSED`. */
export class CheckError extends Error {
  override readonly name = 'CheckError';
  readonly code: 'CHECK_TIMEOUT' | 'CHECK_UNAVAILABLE' | 'CHECK_CLOSED';

  constructor(code: CheckError['code'], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** Checks programs off the main thread. Create one per server with {@link createChecker}. */
export interface Checker {
  /**
   * Checks `code` (the body of the sandbox's async function) against the declarations.
   * @throws CheckError when the check could not be done (timeout, worker failure, closed checker).
   */
  check(code: string, lang?: CheckLanguage, principal?: string): Promise<CheckReport>;
  /**
   * Checks a skill module (a default-exported function) against the declarations and `principal`'s
   * own (its skills' declarations), and answers its input schema and JavaScript when it has no errors.
   * @throws CheckError when the check could not be done.
   */
  checkSkill(code: string, principal?: string): Promise<SkillReport>;
  /** Replaces the declarations (the tool file changed); later checks use them. */
  setDeclarations(declarations: CheckDeclarations): void;
  /** Stops the worker thread; pending checks reject with `CHECK_CLOSED`. */
  close(): Promise<void>;
}

interface Pending {
  request: CheckerRequest & { type: 'check' | 'skill' };
  resolve(report: CheckReport | SkillReport): void;
  reject(error: CheckError): void;
}

/** One worker thread and the moment it is warm. */
interface Thread {
  worker: Worker;
  /** Resolves once the worker has parsed the standard library and the declarations. */
  ready: Promise<void>;
}

/**
 * Starts a checker: a worker thread holding a warm TypeScript language service (the standard library
 * and the declarations parsed once). The worker starts at once and warms up (about half a second of
 * CPU), so the first real check does not pay the cold start. A worker that fails or times out is
 * replaced on the next check.
 */
export function createChecker(options: CheckerOptions): Checker {
  const timeoutMs = options.timeoutMs ?? 5000;
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  let declarations = options.declarations;
  let thread: Thread | undefined;
  let nextId = 1;
  let closed = false;
  const pending = new Map<number, Pending>();

  const settle = (id: number, outcome: { report: CheckReport | SkillReport } | { error: CheckError }) => {
    const entry = pending.get(id);
    if (!entry) return;
    pending.delete(id);
    if ('report' in outcome) entry.resolve(outcome.report);
    else entry.reject(outcome.error);
  };
  const failAll = (error: CheckError) => {
    for (const id of [...pending.keys()]) settle(id, { error });
  };

  const start = (): Thread => {
    const worker = new Worker(WORKER_URL, { workerData: declarations });
    worker.unref();
    let warm: () => void = () => {};
    const ready = new Promise<void>((resolve) => {
      warm = resolve;
    });
    const current: Thread = { worker, ready };
    worker.on('message', (reply: CheckerReply) => {
      if ('ready' in reply) warm();
      else if ('report' in reply) settle(reply.id, { report: reply.report });
      else
        settle(reply.id, { error: new CheckError('CHECK_UNAVAILABLE', `the check failed: ${reply.error}`) });
    });
    const stopped = (message: string, cause?: unknown) => {
      if (thread !== current) return;
      thread = undefined;
      failAll(new CheckError('CHECK_UNAVAILABLE', message, { cause }));
    };
    worker.on('error', (error) => stopped(`the checker stopped: ${error.message}`, error));
    worker.on('exit', () => stopped('the checker stopped'));
    return current;
  };

  /** Rejects check `id` when the worker does not warm up in time, or the check outlasts its timeout. */
  const watch = async (id: number, current: Thread) => {
    const started = await Promise.race([
      current.ready.then(() => true),
      sleep(startTimeoutMs, false, { ref: false }),
    ]);
    if (!pending.has(id)) return;
    if (!started) {
      settle(id, {
        error: new CheckError('CHECK_UNAVAILABLE', `the checker did not start within ${startTimeoutMs} ms`),
      });
      return;
    }
    await sleep(timeoutMs, undefined, { ref: false });
    if (!pending.has(id)) return;
    settle(id, { error: new CheckError('CHECK_TIMEOUT', `the check took longer than ${timeoutMs} ms`) });
    // The compiler may be stuck in this program: a fresh worker serves the checks waiting behind it.
    if (thread === current) {
      thread = undefined;
      void current.worker.terminate();
      for (const entry of pending.values()) send(entry);
    }
  };

  const send = (entry: Pending) => {
    thread ??= start();
    thread.worker.postMessage(entry.request);
    void watch(entry.request.id, thread);
  };

  const ask = (request: Pending['request']): Promise<CheckReport | SkillReport> => {
    if (closed) return Promise.reject(new CheckError('CHECK_CLOSED', 'the checker is closed'));
    return new Promise((resolve, reject) => {
      const entry: Pending = { request, resolve, reject };
      pending.set(request.id, entry);
      send(entry);
    });
  };
  const check = (code: string, lang: CheckLanguage = 'ts', principal?: string): Promise<CheckReport> =>
    ask({ type: 'check', id: nextId++, code, lang, ...(principal && { principal }) });
  const checkSkill = (code: string, principal?: string): Promise<SkillReport> =>
    ask({ type: 'skill', id: nextId++, code, ...(principal && { principal }) });

  thread = start();

  return {
    check,
    checkSkill,
    setDeclarations(next) {
      declarations = next;
      thread?.worker.postMessage({ type: 'declarations', declarations: next } satisfies CheckerRequest);
    },
    async close() {
      closed = true;
      failAll(new CheckError('CHECK_CLOSED', 'the checker is closed'));
      const current = thread;
      thread = undefined;
      await current?.worker.terminate();
    },
  };
}
