import type { Approval } from '@mci/protocol';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { type CallToolResult, RELATED_TASK_META_KEY, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { ApprovalPage, Approvals } from '../approvals/approvals.ts';
import type { Principal, ProcessManager } from '../processes/process-manager-types.ts';
import { ServerError } from '../processes/server-error.ts';

/** The MCP tool that lists the approvals the caller's processes wait for. */
export const LIST_APPROVALS = 'list_approvals';
/** The MCP tool that approves or denies one. */
export const DECIDE_APPROVAL = 'decide_approval';

/** The approval tools, for clients that can neither answer elicitations nor follow tasks. */
export const approvalTools: Tool[] = [
  {
    name: LIST_APPROVALS,
    title: 'List approvals',
    description:
      'The approvals that suspended processes wait for (pending ones unless `state` says otherwise): a tool call a policy says a person must approve first. Newest first, 50 a page; a `nextCursor` in the result reads the next page.',
    inputSchema: {
      type: 'object',
      properties: {
        state: { type: 'string', enum: ['pending', 'approved', 'denied', 'expired', 'canceled'] },
        cursor: { type: 'string', description: 'The `nextCursor` of the page before.' },
      },
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: DECIDE_APPROVAL,
    title: 'Approve or deny a tool call',
    description:
      'Approves or denies a pending approval (an id from list_approvals): its process resumes; approved, the call acts; denied, it fails in the program. Ask the user before approving.',
    inputSchema: {
      type: 'object',
      properties: {
        id: { type: 'string' },
        decision: { type: 'string', enum: ['approve', 'deny'] },
        reason: { type: 'string' },
      },
      required: ['id', 'decision'],
      additionalProperties: false,
    },
    annotations: { destructiveHint: true, openWorldHint: false },
  },
];

/** What the question of an elicitation says about `approval`. */
function question(approval: Approval): string {
  if (approval.kind === 'fetch')
    return `Process ${approval.pid} wants to fetch ${approval.method} ${approval.url}. Approve this request?`;
  const input = approval.input === undefined ? '' : ` with ${JSON.stringify(approval.input)}`;
  return `Process ${approval.pid} wants to call ${approval.tool}${input}. Approve this call?`;
}

/**
 * Approvals over MCP (docs/approvals.md): while a call waits for a process, each approval it asks
 * for is put to the client as an elicitation when the client declared the capability (MCP
 * 2025-11-25, client features, elicitation); the `list_approvals` and `decide_approval` tools
 * serve the others.
 * @see https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation
 */
export class ApprovalPrompts {
  readonly #server: Server;
  readonly #manager: ProcessManager;
  readonly #approvals: Approvals;
  readonly #principal: Principal;
  readonly #logger: Logger | undefined;
  /** Approvals put to the client and not answered yet. */
  readonly #asked = new Set<string>();

  constructor(
    server: Server,
    manager: ProcessManager,
    approvals: Approvals,
    principal: Principal,
    logger: Logger | undefined,
  ) {
    this.#server = server;
    this.#manager = manager;
    this.#approvals = approvals;
    this.#principal = principal;
    this.#logger = logger;
  }

  /**
   * While process `pid` is waited for: asks the client about each approval it waits for, now and as
   * they come (`options` relate the elicitations to the call or task). @returns stop watching.
   */
  watch(pid: number, options: RequestOptions, taskId?: string): () => void {
    if (!this.#server.getClientCapabilities()?.elicitation) return () => {};
    const stop = this.#manager.onEvent((event) => {
      if (event.type === 'approval' && event.pid === pid && event.approval.state === 'pending')
        void this.#ask(event.approval, options, taskId);
    });
    void this.#approvals.list({ pid, state: 'pending' }, this.#principal).then(
      (page) => {
        for (const approval of page.items) void this.#ask(approval, options, taskId);
      },
      () => {},
    );
    return stop;
  }

  async #ask(approval: Approval, options: RequestOptions, taskId: string | undefined): Promise<void> {
    if (this.#asked.has(approval.id)) return;
    this.#asked.add(approval.id);
    try {
      const answer = await this.#server.elicitInput(
        {
          mode: 'form',
          ...(taskId !== undefined && { _meta: { [RELATED_TASK_META_KEY]: { taskId } } }),
          message: question(approval),
          requestedSchema: {
            type: 'object',
            properties: {
              approve: { type: 'boolean', title: 'Approve', description: 'Let this call act' },
              reason: { type: 'string', title: 'Reason' },
            },
            required: ['approve'],
          },
        },
        // A person may take as long as the approval lasts.
        { ...options, timeout: this.#approvals.timeoutMs },
      );
      // `cancel` (dismissed) leaves the approval pending for someone else; `decline` denies.
      if (answer.action === 'cancel') return;
      const approve = answer.action === 'accept' && answer.content?.approve === true;
      const reason =
        typeof answer.content?.reason === 'string' && answer.content.reason !== ''
          ? answer.content.reason
          : answer.action === 'decline'
            ? 'declined in the MCP client'
            : undefined;
      await this.#approvals.decide(approval.id, approve ? 'approve' : 'deny', this.#principal, reason);
    } catch (error) {
      if (!(error instanceof ServerError && error.code === 'NOT_PENDING'))
        this.#logger?.warn({ err: error, approval: approval.id }, 'the approval could not be asked over MCP');
    } finally {
      this.#asked.delete(approval.id);
    }
  }

  /**
   * Answers a call of `list_approvals` or `decide_approval`.
   * @throws ServerError `VALIDATION` for bad arguments (a cursor this list did not give), and the
   *   errors of {@link Approvals.decide}.
   */
  async call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    if (name === LIST_APPROVALS) return this.#list(args);
    const { id, decision, reason } = args;
    if (typeof id !== 'string' || (decision !== 'approve' && decision !== 'deny'))
      throw new ServerError('VALIDATION', `${DECIDE_APPROVAL}: give id and decision (approve or deny)`);
    if (reason !== undefined && typeof reason !== 'string')
      throw new ServerError('VALIDATION', `${DECIDE_APPROVAL}: reason must be a string`);
    const approval = await this.#approvals.decide(id, decision, this.#principal, reason);
    return {
      content: [{ type: 'text', text: `approval ${id} ${approval.state}: process ${approval.pid} resumes` }],
      structuredContent: { approval },
    };
  }

  /**
   * A page of the approvals the caller may see in `state` (default pending), newest first, after
   * `cursor`: as `{ approvals, nextCursor? }`, and one line per approval as text.
   */
  async #list(args: Record<string, unknown>): Promise<CallToolResult> {
    const { state = 'pending', cursor } = args;
    if (
      typeof state !== 'string' ||
      !['pending', 'approved', 'denied', 'expired', 'canceled'].includes(state)
    )
      throw new ServerError(
        'VALIDATION',
        `${LIST_APPROVALS}: state must be pending, approved, denied, expired or canceled`,
        { path: 'state' },
      );
    if (cursor !== undefined && typeof cursor !== 'string')
      throw new ServerError('VALIDATION', `${LIST_APPROVALS}: cursor must be the nextCursor of a page`, {
        path: 'cursor',
      });
    let page: ApprovalPage;
    try {
      page = await this.#approvals.list(
        { state: state as Approval['state'], ...(cursor !== undefined && { cursor }) },
        this.#principal,
      );
    } catch (error) {
      if (error instanceof ServerError && error.code === 'VALIDATION')
        throw new ServerError('VALIDATION', `${LIST_APPROVALS}: ${error.message}`, {
          cause: error,
          ...(error.path !== undefined && { path: error.path }),
        });
      throw error;
    }
    const lines = page.items.map((approval) => `${approval.id}: ${question(approval)}`);
    if (lines.length === 0)
      lines.push(`no ${state} approvals${cursor === undefined ? '' : ' after the cursor'}`);
    if (page.nextCursor !== undefined)
      lines.push(`more: call ${LIST_APPROVALS} with cursor ${JSON.stringify(page.nextCursor)}`);
    return {
      content: [{ type: 'text', text: lines.join('\n') }],
      structuredContent: {
        approvals: page.items,
        ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }),
      },
    };
  }
}
