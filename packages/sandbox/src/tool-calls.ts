import type { SandboxLimits } from './limits.ts';
import type { ToolHost } from './tool-host.ts';

/** Reports one finished call: the value to settle with, and the `tool` event (absent when refused). */
export type ToolCallDone = (
  ok: boolean,
  value: unknown,
  event?: { name: string; durationMs: number; isError: boolean },
) => void;

/**
 * Runs one execution's tool calls on the host: only the tools the host lists, at most
 * `maxToolCalls` in all and `maxConcurrentToolCalls` at once (further calls wait their turn), each
 * with the execution's `AbortSignal` so a kill or timeout stops them (and their processes).
 */
export class ToolCalls {
  readonly names: string[];
  readonly #host: ToolHost;
  readonly #known: Set<string>;
  readonly #limits: SandboxLimits;
  readonly #signal: AbortSignal;
  #count = 0;
  #active = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(host: ToolHost, limits: SandboxLimits, signal: AbortSignal) {
    this.#host = host;
    this.names = host.list().map((tool) => tool.name);
    this.#known = new Set(this.names);
    this.#limits = limits;
    this.#signal = signal;
  }

  call(name: string, props: unknown, done: ToolCallDone): void {
    // The sandbox checks names too, but nothing from the sandbox is trusted.
    if (!this.#known.has(name)) {
      done(false, { name: 'TypeError', message: `Unknown tool "${name}"` });
      return;
    }
    if (++this.#count > this.#limits.maxToolCalls) {
      done(false, {
        name: 'RangeError',
        message: `Tool call limit reached: an execution may make at most ${this.#limits.maxToolCalls} tool calls`,
      });
      return;
    }
    const run = () => void this.#run(name, props, done);
    if (this.#active < this.#limits.maxConcurrentToolCalls) run();
    else this.#waiting.push(run);
  }

  async #run(name: string, props: unknown, done: ToolCallDone): Promise<void> {
    this.#active++;
    const started = performance.now();
    try {
      if (this.#signal.aborted) return;
      const result = await this.#host.execute(name, props, { signal: this.#signal });
      done(true, result, {
        name,
        durationMs: performance.now() - started,
        isError: Boolean(result?.isError),
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      done(
        false,
        { name: 'Error', message: `Tool ${name} failed: ${message}` },
        {
          name,
          durationMs: performance.now() - started,
          isError: true,
        },
      );
    } finally {
      this.#active--;
      this.#waiting.shift()?.();
    }
  }
}
