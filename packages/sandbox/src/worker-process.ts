import { type ChildProcess, fork, spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HostMessage, WorkerMessage } from './protocol.ts';

// From source (the `@mci/source` condition) this module is .ts and so is the worker; once built,
// both are .js.
const WORKER_FILE = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? './worker/main.ts' : './worker/main.js', import.meta.url),
);

/**
 * Node and V8 flags of a worker.
 *
 * - `--no-node-snapshot`: isolated-vm needs it on Node 20+.
 * - `--no-wasm-code-gc`: V8's WebAssembly code GC deadlocks a process that disposes isolated-vm
 *   isolates. The worker's own context runs WebAssembly (amaro, the TypeScript stripper), so V8
 *   frees its replaced code from time to time. `WasmEngine::TriggerGC` runs on a background compile
 *   thread, holds the engine's mutex, and posts a task to every isolate's task runner. When the
 *   worker disposes an isolate at that moment, the task runner holds the isolate's last reference,
 *   and the isolate is torn down on that thread, still under the mutex. Its teardown takes the same
 *   mutex (`WasmEngine::DeleteCompileJobsOnIsolate`) and waits forever, and so does the next
 *   `new Isolate`. Without code GC, the replaced code of amaro's one module stays allocated: bounded,
 *   since each function tiers up at most once. `test/wasm-code-gc.slow.test.ts` reproduces the
 *   deadlock with `--stress-wasm-code-gc`.
 */
const WORKER_EXEC_ARGV = [
  '--no-node-snapshot',
  '--no-wasm-code-gc',
  '--conditions=@mci/source',
  '--disable-warning=ExperimentalWarning',
];

let launcher: { path: string | undefined } | undefined;

/**
 * The path of util-linux's `setpriv` if this is Linux and it supports `--pdeathsig` (checked once,
 * by running it), else undefined.
 *
 * Workers start through `setpriv --pdeathsig SIGKILL`, which asks the kernel to SIGKILL the worker
 * when its host dies (`prctl(PR_SET_PDEATHSIG)`, kept across the exec of node). The worker's own
 * `disconnect` handler does the same, but only while its main thread can run: a worker hung in
 * native code, or stopped, outlived its host. Without `setpriv` (macOS, minimal images) workers rely
 * on that handler alone.
 */
export function pdeathsigLauncher(): string | undefined {
  launcher ??= { path: findSetpriv() };
  return launcher.path;
}

function findSetpriv(): string | undefined {
  if (process.platform !== 'linux') return undefined;
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/bin'].filter(Boolean);
  for (const dir of dirs) {
    const file = join(dir, 'setpriv');
    try {
      accessSync(file, constants.X_OK);
    } catch {
      continue;
    }
    const check = spawnSync(file, ['--pdeathsig', 'SIGKILL', process.execPath, '--version'], {
      stdio: 'ignore',
      timeout: 5000,
    });
    return check.status === 0 ? file : undefined;
  }
  return undefined;
}

/** Bytes of a worker's stderr kept to explain a crash (V8 and isolated-vm print their last words there). */
const STDERR_TAIL_BYTES = 2048;

/** Lines of a dying process's stderr that name the failure: V8's, Node's and isolated-vm's. */
const FATAL_LINE =
  /FATAL ERROR|Fatal (?:JavaScript|process)|out of memory|catastrophic error|Check failed|Abort/i;

/**
 * The part of a dead worker's stderr tail worth reporting: the first line naming the failure (V8
 * prints statistics and stack traces after it), then the last three lines, joined with ` | `.
 */
export function crashLines(stderrTail: string): string {
  const lines = stderrTail
    .trim()
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const last = lines.slice(-3);
  const fatal = lines.find((line) => FATAL_LINE.test(line));
  return (fatal && !last.includes(fatal) ? [fatal, '…', ...last] : last).join(' | ');
}

/** What the pool needs to hear from a worker process. */
export interface WorkerProcessEvents {
  onReady(worker: WorkerProcess): void;
  onWarm(worker: WorkerProcess): void;
  onMessage(worker: WorkerProcess, message: Exclude<WorkerMessage, { type: 'ready' | 'warm' }>): void;
  onExit(worker: WorkerProcess, reason: string): void;
}

/**
 * The host's handle on one sandbox worker process: a child started with an IPC channel (structured
 * clone serialization) that runs isolates. It holds no secrets: its environment is emptied, so even
 * code that broke out of V8 into the worker finds no credentials in `process.env`.
 */
export class WorkerProcess {
  readonly #child: ChildProcess;
  #ready = false;
  #exited = false;
  #stderrTail = '';
  /** Whether the worker's isolate for the next execution is built (it said `ready` or `warm`). */
  warm = false;

  /**
   * Starts the process.
   *
   * @param extraExecArgv Flags added after the worker's own: for tests that stress V8 (never for
   *   users: a flag such as `--allow-natives-syntax` would reach sandboxed code).
   */
  constructor(events: WorkerProcessEvents, extraExecArgv: readonly string[] = []) {
    const execArgv = [...WORKER_EXEC_ARGV, ...extraExecArgv];
    const setpriv = pdeathsigLauncher();
    this.#child = fork(WORKER_FILE, [], {
      // fork runs `execPath ...execArgv WORKER_FILE`: here `setpriv --pdeathsig SIGKILL node ...`.
      ...(setpriv
        ? { execPath: setpriv, execArgv: ['--pdeathsig', 'SIGKILL', process.execPath, ...execArgv] }
        : { execArgv }),
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      env: {},
    });
    this.#child.stderr!.setEncoding('utf8');
    this.#child.stderr!.on('data', (chunk: string) => {
      this.#stderrTail = (this.#stderrTail + chunk).slice(-STDERR_TAIL_BYTES);
    });
    this.#child.on('message', (message: WorkerMessage) => {
      if (message.type === 'ready') {
        this.#ready = true;
        this.warm = true;
        events.onReady(this);
      } else if (message.type === 'warm') {
        this.warm = true;
        events.onWarm(this);
      } else {
        events.onMessage(this, message);
      }
    });
    // `error` covers a failed spawn and a failed send; the `exit` that follows does the cleanup.
    this.#child.on('error', () => {});
    this.#child.on('exit', () => {
      this.#exited = true;
    });
    // `close` comes after `exit` once stderr has been read to its end: the reason then has the
    // worker's last words (which may still be in the pipe at `exit`).
    this.#child.on('close', (code, signal) => {
      this.#exited = true;
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      const why = crashLines(this.#stderrTail);
      events.onExit(this, why ? `${how}: ${why}` : how);
    });
  }

  /**
   * The trust domains of its last runs, most recent last: a hint of which domains' isolates it holds
   * (the pool sends a domain's run to such a worker when it is free).
   */
  readonly domains: string[] = [];

  /** Records that a run of `domain` was sent to this worker. */
  ranDomain(domain: string): void {
    const at = this.domains.indexOf(domain);
    if (at !== -1) this.domains.splice(at, 1);
    this.domains.push(domain);
    if (this.domains.length > 8) this.domains.shift();
  }

  /** The worker's OS process id. */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** Whether the worker has started and not exited. */
  get alive(): boolean {
    return this.#ready && !this.#exited;
  }

  /** Whether the worker exited before it ever became ready. */
  get failedToStart(): boolean {
    return this.#exited && !this.#ready;
  }

  /**
   * Sends a message; false when it could not be sent: the channel is gone (the `exit` event will
   * follow) or the message cannot be serialized. (`ChildProcess.send` also returns false under mere
   * backpressure, when the message is still queued: that counts as sent.)
   */
  send(message: HostMessage): boolean {
    if (this.#exited || !this.#child.connected) return false;
    if (message.type === 'execute') this.warm = false;
    try {
      this.#child.send(message);
      return true;
    } catch {
      return false;
    }
  }

  /** Lets the host process exit while this worker idles (`unref`), or keeps it alive (`ref`). */
  setRef(ref: boolean): void {
    const handles = [this.#child, this.#child.channel, this.#child.stderr] as Array<
      { ref?: () => void; unref?: () => void } | null | undefined
    >;
    for (const handle of handles) (ref ? handle?.ref : handle?.unref)?.call(handle);
  }

  /** Ends the process at once (SIGKILL): used when it stops answering, and on close. */
  kill(): void {
    if (!this.#exited) this.#child.kill('SIGKILL');
  }

  /** Resolves when the process has exited. */
  exited(): Promise<void> {
    if (this.#exited) return Promise.resolve();
    return new Promise((resolve) => this.#child.once('exit', () => resolve()));
  }
}
