import type { SandboxLimits } from './limits.ts';
import { type StateHost, type StateOp, stateCall } from './state-host.ts';
import {
  searchArguments,
  type ToolCatalog,
  type ToolDescription,
  type ToolMatch,
  unknownToolMessage,
} from './tool-catalog.ts';
import type { ToolHost } from './tool-host.ts';

/**
 * The reason an execution's calls are aborted with (kill, timeout, or the end): one shared value, since
 * `abort()` without a reason builds a DOMException, stack and all, on every execution.
 */
const STOPPED = new DOMException('The execution stopped', 'AbortError');

/** Reports one finished call: the value to settle with, and the `tool` event (absent when refused). */
export type HostCallDone = (
  ok: boolean,
  value: unknown,
  event?: { name: string; durationMs: number; isError: boolean },
) => void;

/**
 * Runs one execution's calls out of the sandbox on the host: tool calls (only the tools the host
 * lists) and fetches. Together they may make at most `maxToolCalls` calls and run
 * `maxConcurrentToolCalls` at once (further calls wait their turn), so a program cannot turn the host
 * into a request amplifier. Each call gets the execution's `AbortSignal`: {@link HostCalls.stop} (kill,
 * timeout, or the end) aborts them (and the tools' processes). The signal is created with the first
 * call: most executions make none, and creating and aborting one costs several microseconds.
 */
export class HostCalls {
  readonly names: string[];
  readonly #host: ToolHost | undefined;
  readonly #state: StateHost | undefined;
  readonly #known: Set<string>;
  readonly #limits: SandboxLimits;
  #controller: AbortController | undefined;
  #stopped = false;
  #count = 0;
  #active = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(host: ToolHost | undefined, limits: SandboxLimits, state?: StateHost) {
    this.#host = host;
    this.#state = state;
    this.names = host ? host.list().map((tool) => tool.name) : [];
    this.#known = new Set(this.names);
    this.#limits = limits;
  }

  /** Aborts the calls running and refuses to start the waiting ones (idempotent). */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#controller?.abort(STOPPED);
  }

  // Read only by a call that starts before `stop` (see `#admit`), so a new controller is never
  // already stopped.
  get #signal(): AbortSignal {
    this.#controller ??= new AbortController();
    return this.#controller.signal;
  }

  /** Calls tool `name`; `done` gets the MCI result, or an error when refused or thrown. */
  tool(name: string, props: unknown, done: HostCallDone): void {
    const host = this.#host;
    // The sandbox checks names too, but nothing from the sandbox is trusted.
    if (!host || !this.#known.has(name)) {
      done(false, { name: 'TypeError', message: `Unknown tool "${name}"` });
      return;
    }
    this.#admit(done, async () => {
      const started = performance.now();
      try {
        const result = await host.execute(name, props, { signal: this.#signal });
        const event = { name, durationMs: performance.now() - started, isError: Boolean(result?.isError) };
        // A failed call rejects, so its error text is never read as data (docs/tools.md, "In the sandbox").
        if (result?.isError) {
          const reason = result.error ?? 'the tool reported an error';
          done(false, { name: 'ToolError', message: `Tool ${name} failed: ${reason}` }, event);
        } else done(true, result, event);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        const event = { name, durationMs: performance.now() - started, isError: true };
        // A host that refuses a call says why in `code` (POLICY_DENIED): the program can branch on it.
        const code = (error as { code?: unknown } | null)?.code;
        done(
          false,
          {
            name: 'Error',
            message: `Tool ${name} failed: ${message}`,
            ...(typeof code === 'string' && { code }),
          },
          event,
        );
      }
    });
  }

  /**
   * Answers `tools.search(query, options)` or `tools.describe(name)` (`args` as the program passed
   * them, checked here) from the host's catalog, about the listed tools only. Counts as a call.
   */
  catalog(op: 'search' | 'describe', args: unknown[], done: HostCallDone): void {
    const catalog = this.#host?.catalog;
    if (!catalog) {
      done(false, { name: 'Error', message: `tools.${op} is not available: this host has no tool catalog` });
      return;
    }
    this.#admit(done, async () => {
      let answer: ToolMatch[] | ToolDescription;
      try {
        answer = op === 'search' ? this.#search(catalog, args) : this.#describe(catalog, args);
      } catch (error) {
        const { name, message } = error as Error;
        const type = name === 'RangeError' ? 'RangeError' : 'TypeError';
        done(false, { name: type, message: `tools.${op}: ${message}` });
        return;
      }
      done(true, answer);
    });
  }

  #search(catalog: ToolCatalog, [query, options]: unknown[]): ToolMatch[] {
    const checked = searchArguments(query, options);
    return catalog.search(checked.query, checked.limit).filter((match) => this.#known.has(match.name));
  }

  #describe(catalog: ToolCatalog, [name]: unknown[]): ToolDescription {
    if (typeof name !== 'string') throw new TypeError('name must be a string');
    const description = this.#known.has(name) ? catalog.describe(name) : undefined;
    if (!description) {
      const message = unknownToolMessage(catalog, name, (n) => this.#known.has(n));
      throw new TypeError(`${message} tools.search(query) finds tools by what they do.`);
    }
    return description;
  }

  /**
   * Answers a `state` call (`args` as the program passed them, checked here) from the host's state.
   * Counts as a call.
   */
  state(op: StateOp, args: unknown[], done: HostCallDone): void {
    const state = this.#state;
    if (!state) {
      done(false, { name: 'Error', message: `state.${op} is not available: this host keeps no state` });
      return;
    }
    this.#admit(done, async () => {
      try {
        done(true, await stateCall(state, op, args));
      } catch (error) {
        const { name, message } = error as Error;
        const code = (error as { code?: unknown } | null)?.code;
        done(false, {
          name: name === 'TypeError' || name === 'RangeError' ? name : 'Error',
          message: String(message),
          ...(typeof code === 'string' && { code }),
        });
      }
    });
  }

  /** Runs one fetch (`request` settles `done` itself). */
  fetch(request: (signal: AbortSignal) => Promise<void>, done: HostCallDone): void {
    this.#admit(done, () => request(this.#signal));
  }

  #admit(done: HostCallDone, task: () => Promise<void>): void {
    if (++this.#count > this.#limits.maxToolCalls) {
      done(false, {
        name: 'RangeError',
        message: `Call limit reached: an execution may make at most ${this.#limits.maxToolCalls} tool calls and fetches`,
      });
      return;
    }
    const run = () => {
      this.#active++;
      const finish = () => {
        this.#active--;
        this.#waiting.shift()?.();
      };
      if (this.#stopped) finish();
      else task().then(finish, finish);
    };
    if (this.#active < this.#limits.maxConcurrentToolCalls) run();
    else this.#waiting.push(run);
  }
}
