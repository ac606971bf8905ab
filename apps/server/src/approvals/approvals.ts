import { randomBytes } from 'node:crypto';
import type { Approval, ApprovalState, PageRequest } from '@mci/protocol';
import type { Redactor } from '@mci/schema';
import type { Logger } from 'pino';
import { pageBounds, toPage } from '../paging/cursor.ts';
import type { Principal } from '../processes/process-manager-types.ts';
import { ServerError } from '../processes/server-error.ts';
import type { ApprovalStore, Delivered, Replay } from './approval-store.ts';
import type { Credentials } from './credentials.ts';
import type { AskedCall } from './gated-tools.ts';
import { type Decided, Policies, type PolicyRule, type PolicyTool } from './policy.ts';

/** How long after a decision a process nobody resumed is resumed by the sweep of any node, in ms. */
const RESUME_GRACE_MS = 5000;

/** How long an approval waits for a decision by default, in ms (10 minutes). */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 10 * 60_000;

/** Options of {@link Approvals.open}. */
export interface ApprovalsOptions {
  store: ApprovalStore;
  /** The tools of the server, with what the policy matches on. */
  tools: readonly PolicyTool[];
  /** The config file's rules: in force until rules are stored over the HTTP API. */
  rules?: readonly PolicyRule[];
  /** How long an approval waits for a decision, in ms. @default 600000 (10 minutes) */
  timeoutMs?: number;
  /** Credentials the host adds to the sandbox's `fetch` (docs/security.md). */
  credentials?: Credentials;
  /** The server's secret values, taken out of tool inputs, results and errors and `fetch` responses. */
  redactor?: Redactor;
  /**
   * How often (ms) stored rules are read again (other cluster nodes may change them) and expired
   * approvals collected. @default 1000
   */
  sweepMs?: number;
  logger?: Logger;
}

/** A page of {@link Approvals.list}. */
export interface ApprovalPage {
  items: Approval[];
  nextCursor?: string;
}

/** The rules in force and where they came from. */
export interface PolicySet {
  rules: PolicyRule[];
  /** `config` (the config file's) or `stored` (set over the API). */
  source: 'config' | 'stored';
  updatedAt?: string;
  updatedBy?: string;
}

/** What resumes a process once its approval is decided (the process manager). */
export interface Resumer {
  resume(pid: number): Promise<void>;
  /** Sends the `approval` event of `approval` (asked for or decided) to those who see its process. */
  announce(approval: Approval): Promise<void>;
}

/** A time-ordered approval id: ids sort by creation (pagination follows them). */
const newApprovalId = () => `ap_${Date.now().toString(36).padStart(9, '0')}${randomBytes(6).toString('hex')}`;

/**
 * Policies and approvals (docs/approvals.md): the rules in force, the decisions of tool calls, the
 * approvals that suspended processes wait for, who may read and decide them, and their expiry. Every
 * decision resumes its process: approved, the call acts; denied or expired, it rejects in the sandbox.
 */
export class Approvals {
  readonly store: ApprovalStore;
  readonly timeoutMs: number;
  readonly credentials: Credentials | undefined;
  readonly redactor: Redactor | undefined;
  readonly #tools: Map<string, PolicyTool>;
  readonly #logger: Logger | undefined;
  readonly #sweepMs: number;
  #policies: Policies;
  #set: PolicySet;
  #resumer: Resumer | undefined;
  #sweep: NodeJS.Timeout | undefined;

  private constructor(options: ApprovalsOptions, set: PolicySet) {
    this.store = options.store;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
    this.credentials = options.credentials;
    this.redactor = options.redactor;
    this.#tools = new Map(options.tools.map((tool) => [tool.name, tool]));
    this.#logger = options.logger;
    this.#sweepMs = options.sweepMs ?? 1000;
    this.#set = set;
    this.#policies = new Policies(set.rules);
  }

  /**
   * Reads the stored rules (else takes the config file's).
   * @throws z.ZodError when the config file's rules are invalid.
   */
  static async open(options: ApprovalsOptions): Promise<Approvals> {
    const configRules = new Policies(options.rules ?? []).rules;
    const stored = await options.store.readPolicies();
    const set: PolicySet = stored
      ? { rules: stored.rules, source: 'stored', updatedAt: stored.updatedAt, updatedBy: stored.updatedBy }
      : { rules: [...configRules], source: 'config' };
    return new Approvals(options, set);
  }

  /** Starts resuming decided processes through `resumer`, and the sweep (expiry, rules of other nodes). */
  start(resumer: Resumer): void {
    this.#resumer = resumer;
    this.#sweep = setInterval(() => void this.#sweepOnce(), this.#sweepMs);
    this.#sweep.unref();
  }

  close(): void {
    clearInterval(this.#sweep);
  }

  // --- policies ---------------------------------------------------------------------------------

  /** The rules in force. */
  policySet(): PolicySet {
    return this.#set;
  }

  /** The decision for calls of `tool`. */
  decisionFor(tool: PolicyTool): Decided {
    return this.#policies.forTool(tool);
  }

  /** The decision for a `fetch` of `method` to `url`; undefined when no rule matches (egress rules decide). */
  decisionForFetch(url: URL, method: string): Decided | undefined {
    return this.#policies.forFetch(url, method);
  }

  /** What the policy matches on for tool `name` (just the name for a tool the server does not list). */
  describe(name: string): PolicyTool {
    return this.#tools.get(name) ?? { name };
  }

  /**
   * Replaces the rules (operators only); they are stored, so every cluster node applies them.
   * @throws ServerError `FORBIDDEN` for a client; `VALIDATION` for invalid rules.
   */
  async setPolicies(rules: unknown, principal: Principal): Promise<PolicySet> {
    if (principal.role !== 'operator') throw new ServerError('FORBIDDEN', 'policies are for operators');
    let policies: Policies;
    try {
      policies = new Policies(rules as PolicyRule[]);
    } catch (error) {
      const issue = (error as { issues?: Array<{ path: PropertyKey[]; message: string }> }).issues?.[0];
      const path = ['rules', ...(issue?.path ?? [])].map(String).join('.');
      throw new ServerError('VALIDATION', `${path}: ${issue?.message ?? String(error)}`, { path });
    }
    const updatedAt = await this.store.writePolicies(policies.rules, principal.id);
    this.#policies = policies;
    this.#set = { rules: [...policies.rules], source: 'stored', updatedAt, updatedBy: principal.id };
    this.#logger?.info({ rules: policies.rules.length, by: principal.id }, 'policies changed');
    return this.#set;
  }

  // --- suspensions --------------------------------------------------------------------------------

  /**
   * Stores the approval a run asks for, with what the run delivered (its calls are committed to the
   * process store before): the process may be suspended once this resolves.
   */
  async request(
    process: { pid: number; run: number; owner: string },
    asked: AskedCall,
    delivered: Delivered,
  ): Promise<Approval> {
    const now = Date.now();
    const approval: Approval = {
      id: newApprovalId(),
      pid: process.pid,
      run: process.run,
      principal: process.owner,
      ...(asked.kind === 'tool'
        ? { kind: 'tool', tool: asked.tool, ...(asked.input !== undefined && { input: asked.input }) }
        : { kind: 'fetch', method: asked.method, url: asked.url }),
      position: asked.position,
      state: 'pending',
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + this.timeoutMs).toISOString(),
    };
    await this.store.suspend(approval, delivered);
    const what = asked.kind === 'tool' ? asked.tool : `fetch ${asked.method} ${asked.url}`;
    this.#logger?.info(
      { pid: approval.pid, approval: approval.id, call: what },
      `process ${approval.pid} waits for approval ${approval.id} (${what})`,
    );
    return approval;
  }

  /** What run `run` of process `pid` delivered and its decided approvals (its calls: the process store). */
  replayOf(pid: number, run: number): Promise<Omit<Replay, 'calls'>> {
    return this.store.replayOf(pid, run);
  }

  // --- reading and deciding ---------------------------------------------------------------------

  /**
   * A page of the approvals `principal` may see (an operator: all; a client: those of its
   * processes), newest first: `limit` (1-100, default 50) after `cursor`, the `nextCursor` of the
   * page before.
   * @throws ServerError `VALIDATION` (a cursor this server did not give, a limit out of range).
   */
  async list(
    filter: { state?: ApprovalState; pid?: number } & PageRequest,
    principal: Principal,
  ): Promise<ApprovalPage> {
    const { limit, after } = pageBounds(filter, ['string']);
    const items = await this.store.list({
      ...(filter.state !== undefined && { state: filter.state }),
      ...(filter.pid !== undefined && { pid: filter.pid }),
      ...(principal.role !== 'operator' && { owner: principal.id }),
      ...(after !== undefined && { beforeId: after[0] as string }),
      limit: limit + 1,
    });
    return toPage(items, limit, (approval) => [approval.id]);
  }

  /**
   * Approval `id` if `principal` may see it.
   * @throws ServerError `NOT_FOUND`.
   */
  async get(id: string, principal: Principal): Promise<Approval> {
    const approval = await this.store.get(id);
    if (!approval || (principal.role !== 'operator' && approval.principal !== principal.id))
      throw new ServerError('NOT_FOUND', `approval ${id} not found`, { path: 'id' });
    return approval;
  }

  /**
   * Approves or denies pending approval `id` and resumes its process. Of two deciders racing (on any
   * nodes), exactly one wins.
   * @throws ServerError `NOT_FOUND` (not visible), `NOT_PENDING` (decided already, expired or canceled).
   */
  async decide(
    id: string,
    decision: 'approve' | 'deny',
    principal: Principal,
    reason?: string,
  ): Promise<Approval> {
    const current = await this.get(id, principal);
    const decided =
      current.state === 'pending'
        ? await this.store.decide(id, decision === 'approve' ? 'approved' : 'denied', principal.id, reason)
        : undefined;
    if (!decided) {
      const now = (await this.store.get(id)) ?? current;
      throw new ServerError(
        'NOT_PENDING',
        `approval ${id} is ${now.state}: only a pending approval can be decided`,
      );
    }
    this.#logger?.info(
      { approval: id, pid: decided.pid, state: decided.state, by: principal.id },
      `approval ${id} ${decided.state} by ${principal.id}`,
    );
    await this.#resume(decided);
    return decided;
  }

  /** Announces decided `approval` and resumes its process (unless another node took that on). */
  async #resume(approval: Approval, announce = true): Promise<void> {
    try {
      if (announce) await this.#resumer?.announce(approval);
      if (this.#resumer && (await this.store.claimResume(approval.id)))
        await this.#resumer.resume(approval.pid);
    } catch (error) {
      this.#logger?.error({ err: error, pid: approval.pid }, `process ${approval.pid} could not be resumed`);
    }
  }

  /** Announces `approval` (asked for, or canceled with its process). */
  async announce(approval: Approval): Promise<void> {
    try {
      await this.#resumer?.announce(approval);
    } catch (error) {
      this.#logger?.warn({ err: error, approval: approval.id }, 'the approval event could not be sent');
    }
  }

  /** Expires approvals past their time (their processes resume and the calls reject), reads the rules again. */
  async #sweepOnce(): Promise<void> {
    try {
      for (const approval of await this.store.expireDue(new Date())) {
        this.#logger?.info({ approval: approval.id, pid: approval.pid }, `approval ${approval.id} expired`);
        await this.#resume(approval);
      }
      // Decided, but the node that decided stopped before it resumed the process.
      for (const approval of await this.store.unresumed(new Date(Date.now() - RESUME_GRACE_MS)))
        await this.#resume(approval, false);
      const stored = await this.store.readPolicies();
      if (stored && stored.updatedAt !== this.#set.updatedAt) {
        this.#policies = new Policies(stored.rules);
        this.#set = {
          rules: stored.rules,
          source: 'stored',
          updatedAt: stored.updatedAt,
          updatedBy: stored.updatedBy,
        };
      }
    } catch (error) {
      this.#logger?.warn({ err: error }, 'approvals: the sweep could not read the store');
    }
  }
}
