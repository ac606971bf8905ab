import type { Approval, CallApproval, CallDecision, CallSummary } from '@mci/protocol';
import type {
  EgressAllow,
  FetchGate,
  FetchRequestData,
  FetchResponseData,
  FetchSendOptions,
  ToolCatalog,
  ToolHost,
  ToolResult,
} from '@mci/sandbox';
import type { Redactor } from '@mci/schema';
import { trace } from '@opentelemetry/api';
import {
  callRecord,
  DEFAULT_AUDIT_VALUE_BYTES,
  inputHashOf,
  replayOf,
  type SettledCall,
} from '../audit/call-record.ts';
import type { StoredCall } from '../processes/process-store.ts';
import { redactedCall } from '../secrets/server-secrets.ts';
import type { Replay } from './approval-store.ts';
import type { Credentials } from './credentials.ts';
import type { Decided, PolicyTool } from './policy.ts';

/** An error a gated call rejects with: the sandbox's error gets its `code`. */
export class CallRefused extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/** A call the policy says to ask about: where it is in the run, and what it is (a tool, or a `fetch`). */
export type AskedCall =
  | { kind: 'tool'; position: number; tool: string; input: unknown }
  | { kind: 'fetch'; position: number; method: string; url: string };

/** The name a `fetch` has in its record. */
const FETCH = 'fetch';

/** What a {@link GatedTools} needs from the server. */
export interface GateHooks {
  /** The policy decision for calls of `tool`. */
  decide(tool: PolicyTool): Decided;
  /** The tools' policy facts by name (toolset, tags, annotations). */
  describe(name: string): PolicyTool;
  /** The policy decision for a `fetch` (undefined: no rule matches, the egress rules decide). */
  decideFetch(url: URL, method: string): Decided | undefined;
  /** Credentials the host adds to requests. */
  credentials?: Credentials | undefined;
  /** Takes the server's secret values out of inputs, results, responses and errors. */
  redactor?: Redactor | undefined;
  /**
   * A call needs an approval: the run is to be suspended (the calls in flight have settled and are in
   * the log). The call never settles in this run.
   */
  ask(call: AskedCall): void;
  /** A replayed call differs from the log: the run is to fail with `error`. */
  diverged(error: CallRefused): void;
  /** A call settled (or was refused): its audit record, to store (without `replay`). */
  record?(call: StoredCall): void;
  /** Bytes of JSON of a call's input and result the record keeps. @default 4096 */
  auditValueBytes?: number | undefined;
}

/** What a call is, for its record. */
interface CallFacts {
  position: number;
  kind: 'tool' | 'fetch';
  name: string;
  input: unknown;
  startedAt: string;
  started: number;
  decision: CallDecision;
  rule?: number | undefined;
  approval?: CallApproval | undefined;
}

/** A JSON copy of `value` (what the log stores and compares); undefined stays undefined. */
const jsonCopy = (value: unknown): unknown =>
  value === undefined ? undefined : JSON.parse(JSON.stringify(value));

const refusal = (value: unknown) => {
  const error = value as { message?: string; code?: string };
  return new CallRefused(error.code ?? 'TOOL_ERROR', String(error.message ?? 'the call failed'));
};

/** The approval facts a call's record carries. */
const approvalOf = (approval: Approval): CallApproval => ({
  id: approval.id,
  state: approval.state,
  ...(approval.decidedBy !== undefined && { decidedBy: approval.decidedBy }),
  ...(approval.decidedAt !== undefined && { decidedAt: approval.decidedAt }),
  ...(approval.reason !== undefined && { reason: approval.reason }),
});

/** A record without its input and result value: what a `tool` event carries. */
const summaryOf = (call: StoredCall): CallSummary => {
  const {
    input: _input,
    inputBytes: _bytes,
    inputTruncated: _cut,
    inputHash: _hash,
    replay: _r,
    ...rest
  } = call;
  if (!rest.result) return rest;
  const { value: _value, ...result } = rest.result;
  return { ...rest, result };
};

/**
 * The tools one run sees: every call is checked against the policy (`deny` rejects with
 * `POLICY_DENIED`, `ask` suspends the run until a person decides), and recorded by position with its
 * input, result, duration and decision (the audit: docs/operations.md). A resumed run is the same
 * program run again from the start: calls the records hold are answered from them without acting again, and a call that differs from the log (another tool or
 * other input at that position) fails the run with `REPLAY_DIVERGED`. Positions follow the order the
 * program makes its calls in, which is deterministic for a program that is deterministic up to its
 * calls (see docs/approvals.md).
 */
export class GatedTools implements ToolHost, FetchGate {
  readonly #base: ToolHost | undefined;
  readonly #hooks: GateHooks;
  /** The calls of the run's earlier attempts, by position. */
  readonly #replayed = new Map<number, StoredCall>();
  /** Decided approvals of the run by call position. */
  readonly #decided: ReadonlyMap<number, Approval>;
  /** The records of this attempt's calls (replayed ones included), by position. */
  readonly #records = new Map<number, StoredCall>();
  /** Positions of settled tool calls that no `tool` event has claimed yet, in the order they settled. */
  readonly #unclaimed: number[] = [];
  readonly #inFlight = new Set<Promise<unknown>>();
  #next = 0;
  #asked = false;

  constructor(base: ToolHost | undefined, hooks: GateHooks, replay: Replay | undefined) {
    this.#base = base;
    this.#hooks = hooks;
    for (const call of replay?.calls ?? []) this.#replayed.set(call.position, call);
    this.#decided = replay?.decided ?? new Map();
  }

  /**
   * The records of this attempt whose result was cut, each with its whole result in `replay`: a run
   * that suspends stores them, so that its resume answers these calls again.
   */
  cutRecords(): StoredCall[] {
    return [...this.#records.values()].filter(
      (call) => call.replay !== undefined && !this.#replayed.has(call.position),
    );
  }

  /**
   * The summary of the earliest settled call of tool `name` that no `tool` event has claimed yet (the
   * sandbox sends a call's `tool` event right after the call settles here).
   */
  claimToolCall(name: string): CallSummary | undefined {
    const index = this.#unclaimed.findIndex((position) => this.#records.get(position)?.name === name);
    if (index < 0) return undefined;
    const [position] = this.#unclaimed.splice(index, 1);
    return summaryOf(this.#records.get(position!)!);
  }

  list(): Array<{ name: string }> {
    return this.#base?.list() ?? [];
  }

  /** The base host's catalog: finding and describing tools acts on nothing, so it is not gated. */
  get catalog(): ToolCatalog | undefined {
    return this.#base?.catalog;
  }

  /** Resolves once every call in flight has settled (and is recorded). */
  async settled(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  execute(name: string, props: unknown, options?: { signal?: AbortSignal }): Promise<ToolResult> {
    const input = this.#redactValue(jsonCopy(props));
    return this.#call(
      'tool',
      name,
      input,
      () => this.#hooks.decide(this.#hooks.describe(name)),
      (position) => ({ kind: 'tool', position, tool: name, input }),
      () => this.#redacted(async () => this.#redactValue(await this.#base!.execute(name, props, options))),
      (value) => value as ToolResult,
      (value) => jsonCopy(value),
    );
  }

  fetch(
    request: FetchRequestData,
    send: (options?: FetchSendOptions) => Promise<FetchResponseData>,
  ): Promise<FetchResponseData> {
    const { method, url } = request;
    const body = request.body;
    const input = this.#redactValue({
      method,
      url,
      ...(body !== undefined && {
        body: typeof body === 'string' ? body : Buffer.from(body).toString('base64'),
      }),
    });
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return send();
    }
    // No rule: the egress rules decide (allowNet, else EGRESS_DENIED). A rule that allows (or an
    // approved ask) lets this URL out; each redirect goes on only where a rule allows it.
    const decided = this.#hooks.decideFetch(target, method);
    const credentials = this.#hooks.credentials;
    // The host adds the credentials of the destination; the program never sees them.
    const applied = credentials?.apply(request, target);
    const sent = applied?.request.url ?? target.href;
    const allow: EgressAllow = (hop, hopMethod) =>
      hop.href === sent || this.#hooks.decideFetch(hop, hopMethod)?.decision === 'allow';
    const go = () =>
      this.#redacted(async () =>
        this.#redactResponse(
          await send({
            ...(decided && { allow }),
            ...(applied && { request: applied.request, hostBound: applied.hostBound }),
          }),
        ),
      );
    return this.#call(
      'fetch',
      FETCH,
      input,
      () => decided ?? { decision: 'egress' },
      (position) => ({ kind: 'fetch', position, method, url }),
      go,
      (value) => {
        const logged = value as FetchResponseData & { body: string };
        return { ...logged, body: new Uint8Array(Buffer.from(logged.body, 'base64')) };
      },
      (response) => ({ ...response, body: Buffer.from(response.body).toString('base64') }),
    );
  }

  #redactValue<T>(value: T): T {
    return this.#hooks.redactor ? this.#hooks.redactor.redactValue(value) : value;
  }

  /** `act`, its rejection's message (and the sandbox error it becomes) without secret values. */
  #redacted<T>(act: () => Promise<T>): Promise<T> {
    return redactedCall(this.#hooks.redactor, act);
  }

  /** A response with every secret value in its URL, headers and body replaced. */
  #redactResponse(response: FetchResponseData): FetchResponseData {
    const redactor = this.#hooks.redactor;
    if (!redactor || redactor.empty) return response;
    const body = Buffer.from(response.body.buffer, response.body.byteOffset, response.body.byteLength);
    const text = body.toString('latin1');
    const redacted = redactor.redact(text);
    return {
      ...response,
      url: redactor.redact(response.url),
      headers: response.headers.map(([name, value]) => [name, redactor.redact(value)]),
      body: redacted === text ? response.body : new Uint8Array(Buffer.from(redacted, 'latin1')),
    };
  }

  /**
   * One call at the next position: answered from the replayed log, refused, asked about, or made
   * (and recorded) through `act`. `revive` turns a recorded value back into a result, `record` a
   * result into what the record keeps (JSON).
   */
  #call<T>(
    kind: 'tool' | 'fetch',
    name: string,
    input: unknown,
    decide: () => { decision: CallDecision; rule?: number | undefined },
    asked: (position: number) => AskedCall,
    act: () => Promise<T>,
    revive: (value: unknown) => T,
    record: (result: T) => unknown,
  ): Promise<T> {
    const position = this.#next++;
    const what =
      kind === 'fetch'
        ? `fetch ${(input as { method: string; url: string }).method} ${(input as { url: string }).url}`
        : name;
    const logged = this.#replayed.get(position);
    if (logged) {
      const answer = replayOf(logged);
      if (logged.name !== name || logged.inputHash !== inputHashOf(input) || !answer) {
        const error = new CallRefused(
          'REPLAY_DIVERGED',
          answer
            ? `the resumed program called ${what} at call ${position + 1}, where its first run called ${logged.name}${logged.name === name ? ' with other input' : ''}: a program must make the same calls when it runs again (see docs/approvals.md)`
            : `the result of call ${position + 1} (${what}) of the first run was not kept, so the resumed run cannot replay it`,
        );
        this.#hooks.diverged(error);
        return Promise.reject(error);
      }
      this.#recorded(logged);
      return answer.resolved ? Promise.resolve(revive(answer.value)) : Promise.reject(refusal(answer.value));
    }
    if (this.#asked) return new Promise<never>(() => {});
    const { decision, rule } = decide();
    // The call's span (docs/operations.md, "Traces"), when it is traced.
    trace.getActiveSpan()?.setAttribute('mci.policy.decision', decision);
    const facts: CallFacts = {
      position,
      kind,
      name,
      input,
      startedAt: new Date().toISOString(),
      started: performance.now(),
      decision,
      rule,
    };
    if (decision === 'deny') {
      const why = rule === undefined ? 'the default policy' : `policy rule ${rule + 1}`;
      return this.#refuse(facts, 'POLICY_DENIED', `${what} is denied by ${why}`);
    }
    if (decision === 'ask') {
      const approval = this.#decided.get(position);
      if (!approval) return this.#ask(asked(position));
      facts.approval = approvalOf(approval);
      if (approval.state === 'denied' || approval.state === 'canceled')
        return this.#refuse(facts, 'APPROVAL_DENIED', deniedMessage(what, approval));
      if (approval.state === 'expired')
        return this.#refuse(
          facts,
          'APPROVAL_EXPIRED',
          `nobody approved the call of ${what} before ${approval.expiresAt}`,
        );
    }
    return this.#act(facts, act, record);
  }

  #act<T>(facts: CallFacts, act: () => Promise<T>, record: (result: T) => unknown): Promise<T> {
    const call = act().then(
      (result) => {
        this.#settle(facts, true, record(result));
        return result;
      },
      (error: unknown) => {
        const { message, code } = error as { message?: unknown; code?: unknown };
        this.#settle(facts, false, {
          message: String(message ?? error),
          ...(typeof code === 'string' && { code }),
        });
        throw error;
      },
    );
    this.#inFlight.add(call);
    const forget = () => this.#inFlight.delete(call);
    call.then(forget, forget);
    return call;
  }

  #refuse(facts: CallFacts, code: string, message: string): Promise<never> {
    this.#settle(facts, false, { message, code });
    return Promise.reject(new CallRefused(code, message));
  }

  /** Records a call that settled in this attempt (and hands the record, without `replay`, to be stored). */
  #settle(facts: CallFacts, resolved: boolean, value: unknown): void {
    const { started, ...call } = facts;
    const settled: SettledCall = { ...call, durationMs: performance.now() - started, resolved, value };
    const stored = callRecord(settled, this.#hooks.auditValueBytes ?? DEFAULT_AUDIT_VALUE_BYTES);
    this.#recorded(stored);
    const { replay: _whole, ...row } = stored;
    this.#hooks.record?.(row);
  }

  /** Keeps the record of a call of this attempt (a tool call waits for its `tool` event). */
  #recorded(call: StoredCall): void {
    this.#records.set(call.position, call);
    if (call.kind === 'tool') this.#unclaimed.push(call.position);
  }

  #ask(call: AskedCall): Promise<never> {
    this.#asked = true;
    this.#hooks.ask(call);
    return new Promise<never>(() => {});
  }
}

function deniedMessage(name: string, approval: Approval): string {
  const by = approval.decidedBy === undefined ? '' : ` by ${approval.decidedBy}`;
  const reason = approval.reason === undefined ? '' : `: ${approval.reason}`;
  return `the call of ${name} was denied${by}${reason}`;
}
