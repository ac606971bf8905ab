// Entry point of a sandbox worker process (started by the pool with `--no-node-snapshot` and an IPC
// channel). It owns the isolates: one execution at a time, with one isolate kept warm for the next.
import type { HostMessage, WorkerMessage } from '../protocol.ts';
import { createSandboxIsolate, createSandboxIsolateAsync, type SandboxIsolate } from './sandbox-isolate.ts';
import { WorkerExecution } from './worker-execution.ts';

type ExecuteMessage = Extract<HostMessage, { type: 'execute' }>;

const post = (message: WorkerMessage) => {
  if (process.connected) process.send!(message);
};

let current: WorkerExecution | undefined;
/** The isolate kept ready for the next execution. */
let warm: SandboxIsolate | undefined;
/** The warm isolate being prepared (off the main thread, mostly), if any. */
let warming: Promise<SandboxIsolate | undefined> | undefined;
let warmMemoryLimitMb = 128;
/** How long a request waits for the isolate being warmed before it builds one itself (ms). */
const WARM_WAIT_MS = 20;
/** An execution waiting for the isolate being warmed; `killed` is set by a kill that came first. */
let starting: { id: number; killed?: 'canceled' | 'timeout' } | undefined;

function prepareWarm(): void {
  if (warm || warming) return;
  const preparing = createSandboxIsolateAsync(warmMemoryLimitMb).then(
    (isolate) => isolate,
    () => undefined,
  );
  warming = preparing;
  preparing.then((isolate) => {
    if (warming === preparing) warming = undefined;
    if (!isolate) return;
    if (warm) isolate.dispose();
    else warm = isolate;
  });
}

function run(message: ExecuteMessage, isolate: SandboxIsolate, killed?: 'canceled' | 'timeout'): void {
  const execution = new WorkerExecution(message, isolate, post);
  current = execution;
  execution.done.then(() => {
    if (current === execution) current = undefined;
    prepareWarm();
  });
  if (killed) execution.end(killed);
  else void execution.start();
}

function execute(message: ExecuteMessage): void {
  const { memoryLimitMb } = message.limits;
  warmMemoryLimitMb = memoryLimitMb;
  const ready = warm;
  warm = undefined;
  if (ready?.memoryLimitMb === memoryLimitMb) {
    run(message, ready);
    return;
  }
  ready?.dispose();
  const preparing = warming;
  if (!preparing) {
    run(message, createSandboxIsolate(memoryLimitMb));
    return;
  }
  // An isolate is being warmed right now (the request came right after the last result): waiting
  // for the rest of its preparation is cheaper than building a second one on this thread.
  const waiting: NonNullable<typeof starting> = { id: message.id };
  starting = waiting;
  // Never wait long: an isolated-vm task can be slow to be scheduled (or, rarely, never complete) on
  // a loaded machine; then this request builds its own isolate and the stalled one is abandoned.
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => {
      if (warming === preparing) warming = undefined;
      resolve(undefined);
    }, WARM_WAIT_MS);
  });
  Promise.race([preparing, stalled]).then((isolate) => {
    clearTimeout(timer);
    if (starting === waiting) starting = undefined;
    if (isolate && warm === isolate) warm = undefined;
    else isolate = undefined;
    if (isolate?.memoryLimitMb !== memoryLimitMb) {
      isolate?.dispose();
      isolate = createSandboxIsolate(memoryLimitMb);
    }
    run(message, isolate, waiting.killed);
  });
}

process.on('message', (message: HostMessage) => {
  switch (message.type) {
    case 'execute':
      execute(message);
      return;
    case 'kill':
      if (current?.id === message.id) current.end(message.status);
      else if (starting?.id === message.id) starting.killed = message.status;
      return;
    case 'settle':
      if (current?.id === message.id) current.settle(message.callId, message.ok, message.value);
      return;
  }
});

// The pool is gone (closed, or crashed): nothing left to serve. Not `process.exit()`: its clean-up
// waits for isolated-vm's isolates to stop, and an isolate running `while (true) {}` never does, which
// left orphaned workers spinning a core after their host died. This worker holds nothing to flush.
process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));

warm = createSandboxIsolate(warmMemoryLimitMb);
post({ type: 'ready' });
