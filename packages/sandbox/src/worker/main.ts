// Entry point of a sandbox worker process (started by the pool with `--no-node-snapshot` and an IPC
// channel). It owns the isolates: one execution at a time, with one isolate kept warm for the next.
import type { HostMessage, WorkerMessage } from '../protocol.ts';
import { createSandboxIsolate, createSandboxIsolateAsync, type SandboxIsolate } from './sandbox-isolate.ts';
import { WorkerExecution } from './worker-execution.ts';

const post = (message: WorkerMessage) => {
  if (process.connected) process.send!(message);
};

let current: WorkerExecution | undefined;
/** The isolate kept ready for the next execution. */
let warm: SandboxIsolate | undefined;
/** True while a warm isolate is being prepared (off the main thread, mostly). */
let warming = false;
let warmMemoryLimitMb = 128;

function takeIsolate(memoryLimitMb: number): SandboxIsolate {
  const ready = warm;
  warm = undefined;
  if (ready && ready.memoryLimitMb === memoryLimitMb) return ready;
  ready?.dispose();
  return createSandboxIsolate(memoryLimitMb);
}

function prepareWarm(): void {
  if (warm || warming) return;
  warming = true;
  createSandboxIsolateAsync(warmMemoryLimitMb).then(
    (isolate) => {
      warming = false;
      if (warm) isolate.dispose();
      else warm = isolate;
    },
    () => {
      warming = false;
    },
  );
}

process.on('message', (message: HostMessage) => {
  switch (message.type) {
    case 'execute': {
      warmMemoryLimitMb = message.limits.memoryLimitMb;
      const execution = new WorkerExecution(message, takeIsolate(message.limits.memoryLimitMb), post);
      current = execution;
      execution.done.then(() => {
        if (current === execution) current = undefined;
        prepareWarm();
      });
      void execution.start();
      return;
    }
    case 'kill':
      if (current?.id === message.id) current.end(message.status);
      return;
    case 'settle':
      if (current?.id === message.id) current.settle(message.callId, message.ok, message.value);
      return;
  }
});

// The pool is gone (closed, or crashed): nothing left to serve.
process.on('disconnect', () => process.exit(0));

warm = createSandboxIsolate(warmMemoryLimitMb);
post({ type: 'ready' });
