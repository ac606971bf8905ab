import ivm from 'isolated-vm';
import { bootstrapSource } from '../bootstrap/source.ts';
import { hostFunction } from './host-functions.ts';

/** Receives the fire-and-forget messages the bootstrap sends (`output`, `log`, `tool`, ...). */
export type MessageSink = (kind: unknown, args: unknown[]) => void;

/**
 * One isolate with the bootstrap compiled in it: a fresh isolate for one run (`isolation: isolate`),
 * or one trust domain's isolate, a fresh context per run (`isolation: context`).
 */
export interface IsolateEntry {
  readonly isolate: ivm.Isolate;
  readonly memoryLimitMb: number;
  /** Unique in this worker. */
  readonly id: number;
  /** Contexts made in it so far. */
  runs: number;
  /** Disposes the isolate (and every context in it). Idempotent. */
  dispose(): void;
  readonly disposed: boolean;
  /** @internal The compiled bootstrap, run once in each new context. */
  readonly script: ivm.Script;
}

/** A context of an {@link IsolateEntry} whose globals are installed, ready for one program. */
export interface SandboxContext {
  readonly entry: IsolateEntry;
  readonly isolate: ivm.Isolate;
  readonly context: ivm.Context;
  /** The bootstrap's `control` function (see `bootstrap.ts`); held only here, never in the isolate. */
  readonly control: ivm.Reference<(...args: unknown[]) => unknown>;
  readonly memoryLimitMb: number;
  /** CPU time the isolate had used before the program started (earlier runs, bootstrap), ns. */
  readonly baseCpuTime: bigint;
  /** Which context of its isolate this is (1: the isolate's first). */
  readonly run: number;
  /** Routes the bootstrap's messages to the execution that owns the context. */
  setSink(sink: MessageSink): void;
  /** Drops the context (its globals, pending promises and callbacks); the isolate stays. */
  release(): void;
}

const source = bootstrapSource();
const ORIGIN = { filename: 'mci:bootstrap' };
let cachedData: ivm.ExternalCopy<ArrayBuffer> | undefined;

/**
 * Produces V8 code cache for the bootstrap that includes its inner functions: compiled, run and
 * exercised once in a throw-away isolate, then compiled again there (V8's per-isolate compilation
 * cache hands back the now fully compiled script) with `produceCachedData`. A cache made right after
 * the first compile would hold only the top level, and every new isolate would parse the rest again.
 */
function primeCodeCache(): ivm.ExternalCopy<ArrayBuffer> | undefined {
  const isolate = new ivm.Isolate({ memoryLimit: 32 });
  try {
    const context = isolate.createContextSync();
    const factory = isolate
      .compileScriptSync(source, ORIGIN)
      .runSync(context, { reference: true }) as ivm.Reference<(...args: unknown[]) => unknown>;
    factory.applySync(undefined, [
      new ivm.Callback(() => {}, { ignored: true }),
      new ivm.Callback(hostFunction),
    ]);
    context.evalSync(
      `void __mci_run__({ tools: ['t'] }, async function () { output({ a: [1, new Map([[1, new Date(0)]])] }); console.log('%s', 'x', { y: [1] }); return 1; })`,
    );
    return (
      isolate.compileScriptSync(source, { ...ORIGIN, produceCachedData: true }) as {
        cachedData?: ivm.ExternalCopy<ArrayBuffer>;
      }
    ).cachedData;
  } catch {
    return undefined;
  } finally {
    isolate.dispose();
  }
}

function newIsolate(memoryLimitMb: number): ivm.Isolate {
  return new ivm.Isolate({
    memoryLimit: memoryLimitMb,
    // isolated-vm's advice: v8 has lost control of the isolate; end the process. The pool sees the
    // worker exit, fails its execution and starts a replacement.
    onCatastrophicError: (message) => {
      process.stderr.write(`isolated-vm catastrophic error: ${message}\n`);
      process.abort();
    },
  });
}

type ControlRef = ivm.Reference<(...args: unknown[]) => unknown>;

const ignore: MessageSink = () => {};

/**
 * The isolate's message function `send` (ignored mode: each call is queued to this thread), routed
 * to the current sink.
 *
 * Built in a function of its own, so the closure holds nothing but the sink: isolated-vm does not
 * always release a `Callback`'s function when its isolate is disposed, and a closure that pointed to
 * the execution would keep it reachable with its isolate handle, timers and budgets (see
 * `test/worker-retains-no-finished-executions.test.ts`). `dispose` points the sink back at
 * {@link ignore}.
 */
function messageCallback() {
  let sink = ignore;
  return {
    send: new ivm.Callback((kind: unknown, ...args: unknown[]) => sink(kind, args), { ignored: true }),
    setSink(next: MessageSink) {
      sink = next;
    },
  };
}

let nextIsolateId = 0;

/**
 * Creates an isolate and compiles the bootstrap in it from primed V8 code cache (see
 * {@link primeCodeCache}), so most of the cost of a new isolate is V8's own.
 */
export function createIsolateEntry(memoryLimitMb: number): IsolateEntry {
  const isolate = newIsolate(memoryLimitMb);
  try {
    cachedData ??= primeCodeCache();
    const script = isolate.compileScriptSync(source, cachedData ? { ...ORIGIN, cachedData } : ORIGIN);
    let disposed = false;
    return {
      isolate,
      memoryLimitMb,
      id: ++nextIsolateId,
      runs: 0,
      script,
      get disposed() {
        return disposed || isolate.isDisposed;
      },
      dispose() {
        disposed = true;
        if (!isolate.isDisposed) isolate.dispose();
      },
    };
  } catch (e) {
    if (!isolate.isDisposed) isolate.dispose();
    throw e;
  }
}

/**
 * Creates a context in `entry`'s isolate and runs the bootstrap in it. The context gets exactly two
 * functions, as isolated-vm `Callback`s (arguments and results copied, never References): `send`
 * (ignored mode) and `call` (sync, `hostFunction`).
 *
 * Every step is synchronous, on the calling thread, while no program runs in the isolate: the async
 * API would cost a thread hand-off there and back per step (see docs/notes/sandbox-performance.md).
 * @throws the isolate's error when the bootstrap fails; the caller disposes the isolate.
 */
export function createSandboxContext(entry: IsolateEntry): SandboxContext {
  const { isolate } = entry;
  const context = isolate.createContextSync();
  const factory = entry.script.runSync(context, { reference: true }) as ControlRef;
  const messages = messageCallback();
  const call = new ivm.Callback(hostFunction);
  const control = factory.applySync(undefined, [messages.send, call], {
    result: { reference: true },
  }) as ControlRef;
  factory.release();
  entry.runs++;
  return {
    entry,
    isolate,
    context,
    control,
    memoryLimitMb: entry.memoryLimitMb,
    baseCpuTime: isolate.cpuTime,
    run: entry.runs,
    setSink: messages.setSink,
    release() {
      messages.setSink(ignore);
      if (entry.disposed) return;
      control.release();
      context.release();
    },
  };
}

/** A fresh isolate with one context ready: what a run in `isolation: isolate` mode gets. */
export function createSandboxIsolate(memoryLimitMb: number): SandboxContext {
  const entry = createIsolateEntry(memoryLimitMb);
  try {
    return createSandboxContext(entry);
  } catch (e) {
    entry.dispose();
    throw e;
  }
}
