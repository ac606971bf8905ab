// Entry point of a sandbox worker process (started by the pool with `--no-node-snapshot` and an IPC
// channel). It owns the isolates: one execution at a time, with one isolate kept warm for the next.
import type { HostMessage, WorkerMessage } from '../protocol.ts';
import { createSandboxIsolate, type SandboxIsolate } from './sandbox-isolate.ts';
import { WorkerExecution } from './worker-execution.ts';

type ExecuteMessage = Extract<HostMessage, { type: 'execute' }>;

const post = (message: WorkerMessage) => {
  if (process.connected) process.send!(message);
};

let current: WorkerExecution | undefined;
/** The isolate kept ready for the next execution. */
let warm: SandboxIsolate | undefined;
let warmMemoryLimitMb = 128;

// The next isolate is built on this thread, with the sync API, once the result is out: a request
// that arrives meanwhile waits for it, and a worker never has two isolates under construction. The
// pool hears `warm` when it is ready and prefers such a worker.
function prepareWarm(): void {
  if (warm || current) return;
  try {
    warm = createSandboxIsolate(warmMemoryLimitMb);
    post({ type: 'warm' });
  } catch {
    // Left to the next request, which reports the error if it persists.
  }
}

function execute(message: ExecuteMessage): void {
  const { memoryLimitMb } = message.limits;
  warmMemoryLimitMb = memoryLimitMb;
  let isolate = warm;
  warm = undefined;
  if (isolate?.memoryLimitMb !== memoryLimitMb) {
    isolate?.dispose();
    isolate = createSandboxIsolate(memoryLimitMb);
  }
  const execution = new WorkerExecution(message, isolate, post);
  current = execution;
  execution.done.then(() => {
    if (current === execution) current = undefined;
    // After the messages already queued (a request sent right after the result takes the warm
    // isolate when it is ready, not a second one built beside it).
    setImmediate(prepareWarm);
  });
  void execution.start();
}

process.on('message', (message: HostMessage) => {
  switch (message.type) {
    case 'execute':
      execute(message);
      return;
    case 'kill':
      if (current?.id === message.id) current.end(message.status);
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

// Ctrl-C at a terminal signals the whole foreground process group, workers included: the host decides
// when its workers stop (a server first lets running programs finish).
process.on('SIGINT', () => {});

warm = createSandboxIsolate(warmMemoryLimitMb);
post({ type: 'ready' });
