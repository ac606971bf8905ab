import ivm from 'isolated-vm';
import { bootstrapSource } from '../bootstrap/source.ts';
import { hostFunction } from './host-functions.ts';

/** Receives the fire-and-forget messages the bootstrap sends (`output`, `log`, `tool`, ...). */
export type MessageSink = (kind: unknown, args: unknown[]) => void;

/** An isolate with a context whose globals are installed, ready for one program. */
export interface SandboxIsolate {
  readonly isolate: ivm.Isolate;
  readonly context: ivm.Context;
  /** The bootstrap's `control` function (see `bootstrap.ts`); held only here, never in the isolate. */
  readonly control: ivm.Reference<(...args: unknown[]) => unknown>;
  readonly memoryLimitMb: number;
  /** CPU time the isolate had used before the program started (bootstrap), ns. */
  readonly baseCpuTime: bigint;
  /** Routes the bootstrap's messages to the execution that owns the isolate. */
  setSink(sink: MessageSink): void;
  dispose(): void;
}

const source = bootstrapSource();
let cachedData: ivm.ExternalCopy<ArrayBuffer> | undefined;

/**
 * Creates an isolate and context and runs the bootstrap in it. The bootstrap is compiled from V8's
 * code cache after the first time (`produceCachedData` / `cachedData`), so most of the cost of a new
 * isolate is V8's own. The isolate gets exactly two functions, as isolated-vm `Callback`s (arguments
 * and results copied, never References): `send` (ignored mode) and `call` (sync, `hostFunction`).
 */
export function createSandboxIsolate(memoryLimitMb: number): SandboxIsolate {
  const isolate = new ivm.Isolate({
    memoryLimit: memoryLimitMb,
    // isolated-vm's advice: v8 has lost control of the isolate; end the process. The pool sees the
    // worker exit, fails its execution and starts a replacement.
    onCatastrophicError: (message) => {
      process.stderr.write(`isolated-vm catastrophic error: ${message}\n`);
      process.abort();
    },
  });
  try {
    const context = isolate.createContextSync();
    const script = isolate.compileScriptSync(source, {
      filename: 'mci:bootstrap',
      ...(cachedData ? { cachedData } : { produceCachedData: true }),
    });
    const produced = (script as { cachedData?: ivm.ExternalCopy<ArrayBuffer> }).cachedData;
    if (!cachedData && produced) cachedData = produced;
    const factory = script.runSync(context, { reference: true }) as ivm.Reference<
      (...args: unknown[]) => unknown
    >;
    script.release();
    let sink: MessageSink = () => {};
    const send = new ivm.Callback((kind: unknown, ...args: unknown[]) => sink(kind, args), { ignored: true });
    const call = new ivm.Callback(hostFunction);
    const control = factory.applySync(undefined, [send, call], {
      result: { reference: true },
    }) as ivm.Reference<(...args: unknown[]) => unknown>;
    factory.release();
    return {
      isolate,
      context,
      control,
      memoryLimitMb,
      baseCpuTime: isolate.cpuTime,
      setSink(next) {
        sink = next;
      },
      dispose() {
        if (!isolate.isDisposed) isolate.dispose();
      },
    };
  } catch (e) {
    if (!isolate.isDisposed) isolate.dispose();
    throw e;
  }
}
