import { isDeepStrictEqual } from 'node:util';
import type { Approval } from '@mci/protocol';
import type { ToolHost, ToolResult } from '@mci/sandbox';
import type { LoggedCall, Replay } from './approval-store.ts';
import type { Decided, PolicyTool } from './policy.ts';

/** An error a gated call rejects with: the sandbox's error gets its `code`. */
export class CallRefused extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/** A call the policy says to ask about: where it is in the run, and what it is. */
export interface AskedCall {
  position: number;
  tool: string;
  input: unknown;
}

/** What a {@link GatedTools} needs from the server. */
export interface GateHooks {
  /** The policy decision for calls of `tool`. */
  decide(tool: PolicyTool): Decided;
  /** The tools' policy facts by name (toolset, tags, annotations). */
  describe(name: string): PolicyTool;
  /**
   * A call needs an approval: the run is to be suspended (the calls in flight have settled and are in
   * the log). The call never settles in this run.
   */
  ask(call: AskedCall): void;
  /** A replayed call differs from the log: the run is to fail with `error`. */
  diverged(error: CallRefused): void;
}

/** A JSON copy of `value` (what the log stores and compares); undefined stays undefined. */
const jsonCopy = (value: unknown): unknown =>
  value === undefined ? undefined : JSON.parse(JSON.stringify(value));

const refusal = (call: LoggedCall) => {
  const error = call.value as { message?: string; code?: string };
  return new CallRefused(error.code ?? 'TOOL_ERROR', String(error.message ?? 'the call failed'));
};

/**
 * The tools one run sees: every call is checked against the policy (`deny` rejects with
 * `POLICY_DENIED`, `ask` suspends the run until a person decides), and logged by position with its
 * input and result. A resumed run is the same program run again from the start: calls the log holds
 * are answered from it without acting again, and a call that differs from the log (another tool or
 * other input at that position) fails the run with `REPLAY_DIVERGED`. Positions follow the order the
 * program makes its calls in, which is deterministic for a program that is deterministic up to its
 * calls (see docs/approvals.md).
 */
export class GatedTools implements ToolHost {
  readonly #base: ToolHost;
  readonly #hooks: GateHooks;
  readonly #replay: Replay | undefined;
  /** This run's log: what it replayed, then what it did. */
  readonly calls: Array<LoggedCall | null>;
  readonly #inFlight = new Set<Promise<unknown>>();
  #next = 0;
  #asked = false;

  constructor(base: ToolHost, hooks: GateHooks, replay: Replay | undefined) {
    this.#base = base;
    this.#hooks = hooks;
    this.#replay = replay;
    this.calls = replay ? [...replay.calls] : [];
  }

  list(): Array<{ name: string }> {
    return this.#base.list();
  }

  /** Resolves once every call in flight has settled (and is in the log). */
  async settled(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  execute(name: string, props: unknown, options?: { signal?: AbortSignal }): Promise<ToolResult> {
    const position = this.#next++;
    const input = jsonCopy(props);
    const logged = this.#replay?.calls[position];
    if (logged) {
      if (logged.name !== name || !isDeepStrictEqual(logged.input, input)) {
        const error = new CallRefused(
          'REPLAY_DIVERGED',
          `the resumed program called ${name} at call ${position + 1}, where its first run called ${logged.name}${logged.name === name ? ' with other input' : ''}: a program must make the same calls when it runs again (see docs/approvals.md)`,
        );
        this.#hooks.diverged(error);
        return Promise.reject(error);
      }
      return logged.ok ? Promise.resolve(logged.value as ToolResult) : Promise.reject(refusal(logged));
    }
    if (this.#asked) return new Promise<never>(() => {});
    const { decision, rule } = this.#hooks.decide(this.#hooks.describe(name));
    if (decision === 'deny') {
      const why = rule === undefined ? 'the default policy' : `policy rule ${rule + 1}`;
      return this.#refuse(position, name, input, 'POLICY_DENIED', `${name} is denied by ${why}`);
    }
    if (decision === 'ask') {
      const approval = this.#replay?.decided.get(position);
      if (!approval) return this.#ask(position, name, input);
      if (approval.state === 'denied' || approval.state === 'canceled')
        return this.#refuse(position, name, input, 'APPROVAL_DENIED', deniedMessage(name, approval));
      if (approval.state === 'expired')
        return this.#refuse(
          position,
          name,
          input,
          'APPROVAL_EXPIRED',
          `nobody approved the call of ${name} before ${approval.expiresAt}`,
        );
    }
    return this.#act(position, name, props, input, options);
  }

  #act(
    position: number,
    name: string,
    props: unknown,
    input: unknown,
    options: { signal?: AbortSignal } | undefined,
  ): Promise<ToolResult> {
    this.calls[position] = null;
    const call = this.#base.execute(name, props, options).then(
      (result) => {
        this.calls[position] = { name, input, ok: true, value: jsonCopy(result) };
        return result;
      },
      (error: unknown) => {
        const { message, code } = error as { message?: unknown; code?: unknown };
        this.calls[position] = {
          name,
          input,
          ok: false,
          value: {
            message: String(message ?? error),
            ...(typeof code === 'string' && { code }),
          },
        };
        throw error;
      },
    );
    this.#inFlight.add(call);
    const forget = () => this.#inFlight.delete(call);
    call.then(forget, forget);
    return call;
  }

  #refuse(position: number, name: string, input: unknown, code: string, message: string): Promise<never> {
    this.calls[position] = { name, input, ok: false, value: { message, code } };
    return Promise.reject(new CallRefused(code, message));
  }

  #ask(position: number, name: string, input: unknown): Promise<never> {
    this.#asked = true;
    this.#hooks.ask({ position, tool: name, input });
    return new Promise<never>(() => {});
  }
}

function deniedMessage(name: string, approval: Approval): string {
  const by = approval.decidedBy === undefined ? '' : ` by ${approval.decidedBy}`;
  const reason = approval.reason === undefined ? '' : `: ${approval.reason}`;
  return `the call of ${name} was denied${by}${reason}`;
}
