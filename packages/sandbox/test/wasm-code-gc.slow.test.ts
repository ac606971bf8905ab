import { describe, expect, it, onTestFinished } from 'vitest';
import { DEFAULT_LIMITS } from '../src/limits.ts';
import type { WorkerMessage } from '../src/protocol.ts';
import { WorkerProcess } from '../src/worker-process.ts';

// A worker used to hang for good, now and then, with its execution waiting until its timeout: V8's
// WebAssembly code GC (the worker runs amaro, a WebAssembly module) could tear down a disposed
// isolate on a background thread while holding the lock that teardown takes (see
// `WORKER_EXEC_ARGV`). `--stress-wasm-code-gc` runs that GC far more often: without the fix, one of
// two busy workers hung within 100 TypeScript executions in this test (500-1,300 in a pool).
const EXECUTIONS = 2000;
/** Far above an execution's time: a worker that takes this long is deadlocked. */
const HUNG_MS = 5000;

const limits = {
  timeoutMs: DEFAULT_LIMITS.timeoutMs,
  memoryLimitMb: DEFAULT_LIMITS.memoryLimitMb,
  maxOutputBytes: DEFAULT_LIMITS.maxOutputBytes,
  maxLogBytes: DEFAULT_LIMITS.maxLogBytes,
};

/** A real worker process with `--stress-wasm-code-gc`, and a way to run one program in it. */
async function stressedWorker() {
  let ready!: () => void;
  const started = new Promise<void>((resolve) => (ready = resolve));
  let pending: { id: number; resolve: (m: WorkerMessage) => void; outputs: number } | undefined;
  let exit = '';
  const worker = new WorkerProcess(
    {
      onReady: () => ready(),
      onWarm: () => {},
      onMessage: (_, message) => {
        if (!pending || message.id !== pending.id) return;
        if (message.type === 'events' || message.type === 'done')
          pending.outputs += (message.events ?? []).filter((e) => e.type === 'output').length;
        if (message.type === 'done') pending.resolve(message);
      },
      onExit: (_, reason) => {
        exit = reason;
      },
    },
    ['--stress-wasm-code-gc'],
  );
  onTestFinished(async () => {
    worker.kill();
    await worker.exited();
  });
  await started;
  let nextId = 0;
  /** Resolves to the `done` message and the outputs seen, or 'hung'. */
  return async (code: string) => {
    const id = ++nextId;
    const entry = { id, resolve: (_: WorkerMessage) => {}, outputs: 0 };
    const message = await new Promise<WorkerMessage | 'hung'>((resolve) => {
      const timer = setTimeout(() => resolve('hung'), HUNG_MS);
      entry.resolve = (m) => {
        clearTimeout(timer);
        resolve(m);
      };
      pending = entry;
      worker.send({ type: 'execute', id, code, lang: 'ts', tools: [], limits });
    });
    if (message === 'hung') expect.fail(`execution ${id} got no result in ${HUNG_MS} ms ${exit}`);
    return { message, outputs: entry.outputs };
  };
}

describe('workers under WebAssembly code GC stress', () => {
  it(`run ${EXECUTIONS} TypeScript executions without hanging`, { timeout: 120_000 }, async () => {
    const workers = await Promise.all([stressedWorker(), stressedWorker()]);
    let started = 0;
    await Promise.all(
      workers.map(async (execute) => {
        while (started < EXECUTIONS) {
          started++;
          const { message, outputs } = await execute('const x: number = 1;\noutput(x + 1);');
          expect(message).toMatchObject({ type: 'done', status: 'success' });
          expect(outputs).toBe(1);
        }
      }),
    );
  });
});
