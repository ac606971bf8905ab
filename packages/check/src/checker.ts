import { Worker } from 'node:worker_threads';
import type { CheckDeclarations, CheckLanguage, CheckReport } from './check-types.ts';
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
   * Longest one check may take, in ms, from the moment it is asked (waiting behind other checks
   * counts). Past it the check rejects with `CheckError` `CHECK_TIMEOUT` and the worker restarts.
   * @default 5000
   */
  timeoutMs?: number;
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
  check(code: string, lang?: CheckLanguage): Promise<CheckReport>;
  /** Replaces the declarations (the tool file changed); later checks use them. */
  setDeclarations(declarations: CheckDeclarations): void;
  /** Stops the worker thread; pending checks reject with `CHECK_CLOSED`. */
  close(): Promise<void>;
}

interface Pending {
  request: CheckerRequest;
  resolve(report: CheckReport): void;
  reject(error: CheckError): void;
}

/**
 * Starts a checker: a worker thread holding a warm TypeScript language service (the standard library
 * and the declarations parsed once). The worker starts at once and warms up with an empty program, so
 * the first real check does not pay the cold start (about half a second). A worker that fails or
 * times out is replaced on the next check.
 */
export function createChecker(options: CheckerOptions): Checker {
  const timeoutMs = options.timeoutMs ?? 5000;
  let declarations = options.declarations;
  let worker: Worker | undefined;
  let nextId = 1;
  let closed = false;
  const pending = new Map<number, Pending>();

  const failAll = (error: CheckError) => {
    for (const entry of pending.values()) entry.reject(error);
    pending.clear();
  };

  const start = (): Worker => {
    const thread = new Worker(WORKER_URL, { workerData: declarations });
    thread.unref();
    thread.on('message', (reply: CheckerReply) => {
      const entry = pending.get(reply.id);
      if (!entry) return;
      pending.delete(reply.id);
      if ('report' in reply) entry.resolve(reply.report);
      else entry.reject(new CheckError('CHECK_UNAVAILABLE', `the check failed: ${reply.error}`));
    });
    thread.on('error', (error) => {
      if (worker === thread) worker = undefined;
      failAll(new CheckError('CHECK_UNAVAILABLE', `the checker stopped: ${error.message}`, { cause: error }));
    });
    thread.on('exit', () => {
      if (worker !== thread) return;
      worker = undefined;
      failAll(new CheckError('CHECK_UNAVAILABLE', 'the checker stopped'));
    });
    return thread;
  };

  const send = (request: CheckerRequest) => {
    worker ??= start();
    worker.postMessage(request);
  };

  const check = (code: string, lang: CheckLanguage = 'ts'): Promise<CheckReport> => {
    if (closed) return Promise.reject(new CheckError('CHECK_CLOSED', 'the checker is closed'));
    const id = nextId++;
    return new Promise<CheckReport>((resolve, reject) => {
      const signal = AbortSignal.timeout(timeoutMs);
      const onTimeout = () => {
        if (!pending.delete(id)) return;
        reject(new CheckError('CHECK_TIMEOUT', `the check took longer than ${timeoutMs} ms`));
        // The language service may be stuck in this program: a fresh worker serves the checks
        // waiting behind it.
        const stuck = worker;
        worker = undefined;
        void stuck?.terminate();
        for (const entry of pending.values()) send(entry.request);
      };
      signal.addEventListener('abort', onTimeout, { once: true });
      const settle = () => signal.removeEventListener('abort', onTimeout);
      const request: CheckerRequest = { type: 'check', id, code, lang };
      pending.set(id, {
        request,
        resolve: (report) => {
          settle();
          resolve(report);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      send(request);
    });
  };

  // Warm up: the first check parses the standard library and the declarations.
  check('').catch(() => {});

  return {
    check,
    setDeclarations(next) {
      declarations = next;
      if (worker) worker.postMessage({ type: 'declarations', declarations: next } satisfies CheckerRequest);
    },
    async close() {
      closed = true;
      failAll(new CheckError('CHECK_CLOSED', 'the checker is closed'));
      const thread = worker;
      worker = undefined;
      await thread?.terminate();
    },
  };
}
