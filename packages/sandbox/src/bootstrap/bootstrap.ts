// Runs INSIDE the isolate. Shipped as source text (`Function.prototype.toString`), so this function
// must not reference anything outside its own body (types are erased and fine).
import type { Cloner } from './clone.ts';
import type { FetchRequestData, FetchResponseData } from './fetch.ts';
import type { InspectCopy } from './inspect-copy.ts';
import type { Primordials } from './primordials.ts';
import type { HostRequest, ToolsAndSkills } from './tools-and-skills.ts';
import type { UrlApis } from './url.ts';
import type { HostCall, WebApis } from './web-apis.ts';

/** Fire-and-forget message to the worker (an isolated-vm `Callback` in ignored mode). */
export type Send = (kind: string, ...args: unknown[]) => void;

/** An error as it leaves the isolate: strings only. */
export interface ErrorData {
  name: string;
  message: string;
  stack?: string;
  /** A machine-readable reason a host call was refused (`POLICY_DENIED`), set as the error's `code`. */
  code?: string;
}

/** The other bootstrap parts, passed in as values because each is shipped as separate source text. */
export interface BootstrapLib {
  capturePrimordials: () => Primordials;
  createCloner: (P: Primordials) => Cloner;
  createInspectCopier: (P: Primordials) => InspectCopy;
  createToolsAndSkills: (
    P: Primordials,
    hostCall: HostRequest,
    cloner: Cloner,
    define: (name: string, value: unknown) => void,
  ) => ToolsAndSkills;
  createUrlApis: (P: Primordials, call: HostCall, parts: readonly string[]) => UrlApis;
  /** `URL_PARTS` of `url.ts`. */
  urlParts: readonly string[];
  installWebApis: (
    P: Primordials,
    call: HostCall,
    define: (name: string, value: unknown) => void,
    url: UrlApis,
  ) => WebApis;
  installFetch: (
    P: Primordials,
    web: WebApis,
    request: (data: FetchRequestData) => Promise<FetchResponseData>,
    define: (name: string, value: unknown) => void,
  ) => void;
}

/** Per-execution settings, written into the program's wrapper line (see `transpile.ts`). */
export interface RunConfig {
  tools: string[];
  /** The skills of `skills.<name>(input)`: name -> function body (see `SkillHost.sources`); no `skills` without. */
  skills?: Record<string, string>;
  /** Seeds `Math.random` (32-bit): a program run again with the same seed draws the same numbers. */
  seed?: number;
}

/** What the program's script resolves to. */
export type RunOutcome = ({ ok: true } | { ok: false; error: ErrorData }) & {
  /**
   * The task (numbered by the worker, 0 for the script run itself) during which the program ended:
   * the worker waits for that task's own result, which carries an unhandled rejection of its last
   * moment.
   */
  task: number;
};

/**
 * The worker's handle into the isolate: `settle` resolves a pending tool or fetch call, `timer` fires
 * a `setTimeout` callback; `task` numbers the call (see {@link RunOutcome.task}). Never reachable
 * from sandboxed code.
 */
export type Control = (
  op: 'settle' | 'timer',
  task: number,
  a?: unknown,
  b?: unknown,
  c?: unknown,
) => unknown;

/**
 * Installs the sandbox globals (`output` with `output.image` and `output.file`, `state`, `console`, `tools`,
 * `fetch`, timers, web APIs) and returns the {@link Control} function. `send` (fire-and-forget,
 * queued for the worker's thread) and `call`
 * stay in this closure: no global, no property and no prototype chain leads to them, and they carry
 * only copies (isolated-vm `Callback` semantics).
 */
export function bootstrap(send: Send, call: HostCall, lib: BootstrapLib): Control {
  const P = lib.capturePrimordials();
  /** The worker's number of the task running now; 0 while the script itself runs. */
  let task = 0;
  const cloner = lib.createCloner(P);
  const inspectCopy = lib.createInspectCopier(P);
  const g = P.globalThis as unknown as Record<string, unknown>;
  const define = (name: string, value: unknown) =>
    P.defineProperty(g, name, { value, writable: true, configurable: true, enumerable: false });

  // Capabilities a sandboxed program has no use for and that widen the attack surface: shared memory
  // (could alias buffers that cross the bridge) and WebAssembly (a second JIT).
  for (const name of ['SharedArrayBuffer', 'Atomics', 'WebAssembly']) delete g[name];

  const describeError = (e: unknown): ErrorData => {
    try {
      if (P.isError ? P.isError(e) : e instanceof P.Error) {
        const err = e as Error;
        const stack = err.stack;
        return {
          name: P.String(err.name),
          message: P.String(err.message),
          stack: typeof stack === 'string' ? stack : undefined,
        };
      }
      const text =
        typeof e === 'string' ? P.jsonStringify(e) : typeof e === 'symbol' ? e.toString() : P.String(e);
      return { name: 'Error', message: `Uncaught ${text}` };
    } catch {
      return { name: 'Error', message: 'Uncaught exception (its value could not be read)' };
    }
  };
  const fatal = (e: unknown) => send('fatal', describeError(e));

  // --- calls answered later by the host (tools, fetch) ---
  const pending = new P.Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  let nextId = 0;
  const hostCall: HostRequest = (kind, a, b) =>
    new P.Promise<unknown>((resolve, reject) => {
      const id = ++nextId;
      P.mapSet(pending, id, { resolve, reject });
      send(kind, id, a, b);
    });
  const settle = (id: unknown, ok: unknown, value: unknown) => {
    const entry = P.mapGet(pending, id as number);
    if (!entry) return;
    P.mapDelete(pending, id as number);
    if (ok) return entry.resolve(value);
    const data = value as ErrorData;
    const error = new (data.name === 'TypeError' ? P.TypeError : P.Error)(P.String(data.message));
    if (data.name !== 'TypeError' && data.name !== 'Error')
      P.defineProperty(error, 'name', { value: P.String(data.name), configurable: true, writable: true });
    if (typeof data.code === 'string')
      P.defineProperty(error, 'code', {
        value: data.code,
        configurable: true,
        writable: true,
        enumerable: true,
      });
    entry.reject(error);
  };

  // --- output ---
  let pendingOutputs = 0;
  let drained: (() => void) | undefined;
  const emitOutput = (value: unknown, what: string) => {
    const out = cloner.copyOutput(value, what);
    if ('json' in out) send('outputJson', out.json);
    else send('output', out.value);
  };
  const outputDone = () => {
    if (--pendingOutputs === 0 && drained) drained();
  };
  function output(value: unknown): Promise<void> | undefined {
    const isThenable =
      (typeof value === 'object' || typeof value === 'function') &&
      value !== null &&
      typeof (value as { then?: unknown }).then === 'function';
    if (!isThenable) {
      emitOutput(value, 'output()');
      return undefined;
    }
    pendingOutputs++;
    // The returned promise rejects when the awaited value does; if the program never handles it,
    // isolated-vm reports it as an unhandled rejection and the execution fails with it.
    return P.promiseThen(
      P.promiseResolve(value),
      (v: unknown) => {
        try {
          emitOutput(v, 'output()');
        } finally {
          outputDone();
        }
      },
      (e: unknown) => {
        outputDone();
        throw e;
      },
    ) as Promise<void>;
  }
  // Pictures and files: the worker checks them and counts them against the output budget, and answers
  // like a tool call, so a refusal rejects the promise (an unhandled one fails the run) with the reason.
  const media = (kind: 'image' | 'file', args: unknown[], what: string): Promise<void> => {
    const sent = hostCall(kind, cloner.copyOut(args, what));
    pendingOutputs++;
    return P.promiseThen(
      sent,
      () => {
        outputDone();
      },
      (e: unknown) => {
        outputDone();
        throw e;
      },
    ) as Promise<void>;
  };
  P.defineProperty(output, 'image', {
    enumerable: true,
    value: function image(data: unknown, mimeType: unknown) {
      return media('image', [data, mimeType], 'output.image() argument');
    },
  });
  P.defineProperty(output, 'file', {
    enumerable: true,
    value: function file(name: unknown, data: unknown, mimeType?: unknown) {
      return media('file', [name, data, mimeType], 'output.file() argument');
    },
  });
  define('output', output);

  // --- state: the durable key-value store of the session, answered by the host (which checks the
  // arguments; values leave and come back by structured clone, so Map, Date and bigint survive) ---
  const stateOp =
    (op: string) =>
    (...args: unknown[]) =>
      hostCall('state', op, cloner.copyOut(args, `state.${op}() argument`));
  define(
    'state',
    P.objectFreeze({
      get: stateOp('get'),
      set: stateOp('set'),
      delete: stateOp('delete'),
      keys: stateOp('keys'),
    }),
  );

  // --- console ---
  const log =
    (stream: 'stdout' | 'stderr') =>
    (...args: unknown[]) => {
      const copied: unknown[] = [];
      for (let i = 0; i < args.length; i++) copied[i] = inspectCopy(args[i]);
      send('log', stream, copied);
    };
  define('console', {
    log: log('stdout'),
    info: log('stdout'),
    debug: log('stdout'),
    warn: log('stderr'),
    error: log('stderr'),
  });

  // --- timers ---
  const timers = new P.Map<number, () => void>();
  let nextTimer = 0;
  define('setTimeout', function setTimeout(callback: unknown, delay?: unknown, ...args: unknown[]) {
    if (typeof callback !== 'function') throw new P.TypeError('setTimeout: the callback must be a function');
    const id = ++nextTimer;
    const ms = Number(delay);
    P.mapSet(timers, id, () => P.apply(callback, undefined, args));
    send('timer', id, P.numberIsFinite(ms) ? P.mathMin(P.mathMax(ms, 0), 2147483647) : 0);
    return id;
  });
  define('clearTimeout', function clearTimeout(id: unknown) {
    if (P.mapDelete(timers, id as number)) send('clearTimer', id);
  });
  const fireTimer = (id: unknown) => {
    const fn = P.mapGet(timers, id as number);
    if (!fn) return;
    P.mapDelete(timers, id as number);
    try {
      fn();
    } catch (e) {
      fatal(e);
    }
  };

  // --- the rest of the standard library ---
  define('structuredClone', function structuredClone(value: unknown) {
    try {
      return cloner.copy(value, 'structuredClone()');
    } catch (e) {
      if (e instanceof P.TypeError)
        P.defineProperty(e, 'name', { value: 'DataCloneError', configurable: true, writable: true });
      throw e;
    }
  });
  define('queueMicrotask', function queueMicrotask(callback: unknown) {
    if (typeof callback !== 'function')
      throw new P.TypeError('queueMicrotask: the callback must be a function');
    P.promiseThen(P.promiseResolve(), () => {
      try {
        P.apply(callback, undefined, []);
      } catch (e) {
        fatal(e);
      }
    });
  });
  define('require', function require() {
    throw new P.Error(
      'require() is not available in the sandbox: there are no modules. Use the globals instead: tools, fetch, output, console.',
    );
  });
  // The web APIs and fetch are installed on first use: most programs never touch them, and building
  // them is a good part of a fresh isolate's start-up cost.
  const lazy = (names: string[], install: () => void) => {
    for (const name of names) {
      P.defineProperty(g, name, {
        configurable: true,
        enumerable: false,
        get() {
          install();
          return g[name];
        },
        set(value: unknown) {
          install();
          define(name, value);
        },
      });
    }
  };
  let web: WebApis | undefined;
  const installWeb = () => {
    web ??= lib.installWebApis(P, call, define, lib.createUrlApis(P, call, lib.urlParts));
    return web;
  };
  lazy(['URL', 'URLSearchParams', 'TextEncoder', 'TextDecoder', 'Headers', 'crypto'], installWeb);
  let fetchInstalled = false;
  lazy(['fetch'], () => {
    if (fetchInstalled) return;
    fetchInstalled = true;
    lib.installFetch(
      P,
      installWeb(),
      (data) => hostCall('fetch', data) as Promise<FetchResponseData>,
      define,
    );
  });

  // --- tools and skills ---
  const { installTools, installSkills } = lib.createToolsAndSkills(P, hostCall, cloner, define);

  // --- running the program ---
  // The outcome resolves a promise: without a prototype, a program that defined
  // `Object.prototype.then` cannot hijack it.
  const bare = <T extends object>(o: T): T => {
    P.setPrototypeOf(o, null);
    return o;
  };
  /** Replaces `Math.random` with a generator seeded by `seed` (mulberry32: small, uniform, not for secrets). */
  const seedRandom = (seed: number) => {
    let state = seed | 0;
    const random = () => {
      state = (state + 0x6d2b79f5) | 0;
      let t = P.imul(state ^ (state >>> 15), 1 | state);
      t = (t + P.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    P.defineProperty(P.Math, 'random', {
      value: random,
      writable: true,
      configurable: true,
      enumerable: false,
    });
  };

  async function run(main: () => Promise<unknown>, config: RunConfig): Promise<RunOutcome> {
    installTools(config.tools);
    if (config.skills) installSkills(config.skills);
    if (typeof config.seed === 'number') seedRandom(config.seed);
    let value: unknown;
    try {
      value = await P.apply(main, undefined, []);
      while (pendingOutputs > 0) await new P.Promise<void>((resolve) => (drained = resolve));
      if (value !== undefined) emitOutput(value, 'return value');
    } catch (e) {
      return bare({ ok: false, error: describeError(e), task });
    }
    return bare({ ok: true, task });
  }

  // The compiled program calls this first (see `transpile.ts`), so starting it takes no extra trip
  // into the isolate. One-shot: it removes itself before the program's code runs.
  P.defineProperty(g, '__mci_run__', {
    configurable: true,
    value: (config: RunConfig, main: () => Promise<unknown>) => {
      delete g.__mci_run__;
      return run(main, config);
    },
  });

  return function control(op, n, a, b, c) {
    task = n;
    if (op === 'settle') return settle(a, b, c);
    if (op === 'timer') return fireTimer(a);
    return undefined;
  };
}
