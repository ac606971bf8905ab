// Entry point of a sandbox worker process (started by the pool with `--no-node-snapshot` and an IPC
// channel). It owns the isolates: one execution at a time; a fresh isolate per run, or (`reuse` in
// the request) one isolate per trust domain with a fresh context per run; one isolate kept warm for
// a run that needs a new one, and the next context of the last domain made ahead.
import type { HostMessage, WorkerMessage } from '../protocol.ts';
import { heapUsedBytes } from './isolate-figures.ts';
import {
  createSandboxContext,
  createSandboxIsolate,
  type IsolateEntry,
  type SandboxContext,
} from './sandbox-isolate.ts';
import { WorkerExecution } from './worker-execution.ts';

type ExecuteMessage = Extract<HostMessage, { type: 'execute' }>;

/** Trust domains whose isolate a worker keeps; the least recently used one past this is disposed. */
const MAX_DOMAINS = 8;

const post = (message: WorkerMessage) => {
  if (process.connected) process.send!(message);
};

let current: WorkerExecution | undefined;
/** A fresh isolate with its first context, kept ready for the next run that needs a new isolate. */
let warm: SandboxContext | undefined;
let warmMemoryLimitMb = 128;

/** A trust domain's isolate, and its next context when made ahead. */
interface Domain {
  entry: IsolateEntry;
  next?: SandboxContext;
}
/** By `domain` and memory limit, least recently used first. */
const domains = new Map<string, Domain>();
/** The domain of the last run: its next context is made ahead. */
let lastDomain: string | undefined;

function takeWarm(memoryLimitMb: number): SandboxContext {
  const sandbox = warm;
  warm = undefined;
  if (sandbox?.memoryLimitMb === memoryLimitMb) return sandbox;
  sandbox?.entry.dispose();
  return createSandboxIsolate(memoryLimitMb);
}

/** A fresh context in `key`'s isolate, or a new isolate for a domain not held (or retired). */
function contextFor(key: string, memoryLimitMb: number): SandboxContext {
  const domain = domains.get(key);
  domains.delete(key);
  if (domain && !domain.entry.disposed) {
    domains.set(key, domain);
    const next = domain.next;
    domain.next = undefined;
    if (next) return next;
    try {
      return createSandboxContext(domain.entry);
    } catch {
      // The isolate failed to make a context (its heap is full): retire it, take a new one.
      retire(key, domain);
    }
  }
  const sandbox = takeWarm(memoryLimitMb);
  domains.set(key, { entry: sandbox.entry });
  for (const [oldKey, old] of domains) {
    if (domains.size <= MAX_DOMAINS) break;
    retire(oldKey, old);
  }
  return sandbox;
}

function retire(key: string, domain: Domain): void {
  if (domains.get(key) === domain) domains.delete(key);
  domain.next?.release();
  domain.entry.dispose();
}

// Made on this thread, with the sync API, once the result is out: a request that arrives meanwhile
// waits for it, and a worker never builds two at once. The pool hears `warm` when the fresh isolate
// is ready and prefers such a worker.
function prepareWarm(): void {
  if (current) return;
  const domain = lastDomain === undefined ? undefined : domains.get(lastDomain);
  if (domain && !domain.next && !domain.entry.disposed) {
    try {
      domain.next = createSandboxContext(domain.entry);
    } catch {
      retire(lastDomain!, domain);
    }
    setImmediate(prepareWarm);
    return;
  }
  if (warm) return;
  try {
    warm = createSandboxIsolate(warmMemoryLimitMb);
    post({ type: 'warm' });
  } catch {
    // Left to the next request, which reports the error if it persists.
  }
}

function execute(message: ExecuteMessage): void {
  const { memoryLimitMb } = message.limits;
  const { reuse } = message;
  warmMemoryLimitMb = memoryLimitMb;
  const key = reuse && `${memoryLimitMb}:${reuse.domain}`;
  let sandbox: SandboxContext;
  try {
    sandbox = key ? contextFor(key, memoryLimitMb) : takeWarm(memoryLimitMb);
  } catch (error) {
    post({
      type: 'done',
      id: message.id,
      status: 'failed',
      error: { name: 'Error', message: `The sandbox could not start: ${(error as Error).message}` },
      cpuTimeMs: 0,
      heapUsedBytes: 0,
      truncated: false,
      rssBytes: process.memoryUsage.rss(),
      isolate: { id: 0, run: 0 },
    });
    return;
  }
  const execution = new WorkerExecution(message, sandbox, post);
  current = execution;
  lastDomain = key;
  execution.done.then((settled) => {
    if (current === execution) current = undefined;
    const domain = key === undefined ? undefined : domains.get(key);
    // A run stopped mid-way (killed, timed out, out of memory) retires its isolate; so do its run
    // count and its heap. Otherwise only the context goes, with all the run left behind.
    if (
      !domain ||
      domain.entry !== sandbox.entry ||
      !settled ||
      sandbox.entry.runs >= reuse!.maxRuns ||
      heapUsedBytes(sandbox.isolate) > reuse!.maxHeapMb * 1024 * 1024
    ) {
      sandbox.release();
      if (domain?.entry === sandbox.entry) retire(key!, domain);
      else sandbox.entry.dispose();
    } else sandbox.release();
    // After the messages already queued (a request sent right after the result takes what is
    // ready, not a second isolate built beside it).
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
