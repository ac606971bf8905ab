import type { ToolCatalog } from '@mci/sandbox';
import type { ResolvedTool } from '@mci/schema';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  type CreateTaskResult,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  isJSONRPCRequest,
  LATEST_PROTOCOL_VERSION,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  RELATED_TASK_META_KEY,
  ReadResourceRequestSchema,
  type ServerNotification,
  type ServerRequest,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { Approvals } from '../approvals/approvals.ts';
import type { Principal, ProcessManager } from '../processes/process-manager-types.ts';
import { ServerError, toServerError } from '../processes/server-error.ts';
import type { Skills } from '../skills/skills.ts';
import { StoreError } from '../store/store-error.ts';
import { createToolCatalog } from '../tool-search/tool-catalog.ts';
import { renderSandboxGlobals } from '../tools-dts/sandbox-globals-dts.ts';
import { ATTR_GEN_AI_TOOL_NAME, ATTR_MCP_METHOD_NAME, ATTR_MCP_SESSION_ID } from '../tracing/attributes.ts';
import { traceMessage } from '../tracing/message-span.ts';
import { metaCarrier } from '../tracing/trace-context.ts';
import { ApprovalPrompts, approvalTools, DECIDE_APPROVAL, LIST_APPROVALS } from './approval-prompts.ts';
import { type CallPlan, processInputOf, runCodePlan } from './call-plans.ts';
import { directToolResult, runCodeResult } from './call-results.ts';
import { describeToolResult, searchToolsResult } from './catalog-results.ts';
import { sendPlainErrorMessages } from './plain-error-messages.ts';
import { type McpCallMetadata, mcpCallOf } from './process-task.ts';
import { createProcessTaskStore } from './process-task-store.ts';
import { ProgressRelay } from './progress-relay.ts';
import {
  DESCRIBE_TOOL,
  describeToolTool,
  type ExposedTool,
  mciToolDefinition,
  RUN_CODE,
  runCodeTool,
  SEARCH_TOOLS,
  SKILL_TOOL_PREFIX,
  searchToolsTool,
  skillToolDefinition,
  TOOLS_DTS_URI,
} from './tool-definitions.ts';

/** The first protocol version with tasks (SEP-1686). */
const TASKS_PROTOCOL_VERSION = '2025-11-25';

/** Default and largest task ttl, in ms (1 h). */
export const DEFAULT_MAX_TASK_TTL_MS = 60 * 60 * 1000;

/** Options of {@link createMciMcpServer}. */
export interface MciMcpServerOptions {
  manager: ProcessManager;
  /** Who calls through this server: its processes and tasks are this principal's. */
  principal: Principal;
  /** The MCP session id (`stdio` for `mci mcp`): the default `ref` of its processes is `mcp:<id>`. */
  sessionId: string;
  /** The tools exposed directly (and declared to `run_code`), already filtered. */
  tools: readonly ExposedTool[];
  /** The catalog of `tools` (`search_tools`, `describe_tool`). @default one built from `tools` */
  catalog?: ToolCatalog;
  /** Whether `tasks/list` answers (it does not on HTTP without tokens). */
  listTasks: boolean;
  /** Whether sandboxed code reaches the open network (`run_code`'s `openWorldHint`). @default true */
  openWorld?: boolean;
  /** Cap of `run_code`'s text block, in UTF-8 bytes. @default 16384 */
  responsePipeBytes?: number;
  /** Largest task ttl granted, in ms; also the ttl of a task that asks for none. @default 1 h */
  maxTaskTtlMs?: number;
  /** Declarations longer than this (bytes) are not inlined in `run_code`'s description. @default 16384 */
  maxInlineDtsBytes?: number;
  /** Server name and version announced at initialization. */
  serverInfo?: { name: string; version: string };
  logger?: Logger;
  /**
   * Policies and approvals: approvals are asked of clients with elicitation, and `list_approvals` /
   * `decide_approval` serve the others (docs/approvals.md).
   */
  approvals?: Approvals;
  /** The caller's saved skills, each listed as a tool `skill_<name>`. @default none */
  skills?: Pick<Skills, 'all'>;
}

/** One MCP server instance (one per stdio process or HTTP session). */
export interface MciMcpServer {
  readonly server: Server;
  /** Connects the transport (records the negotiated protocol version on the way). */
  connect(transport: Transport): Promise<void>;
  /** Resolves once no `tools/call` or `tasks/result` is in flight (their answers are sent). */
  drain(): Promise<void>;
  /** Closes the transport and stops relaying events (idempotent); processes keep running. */
  close(): Promise<void>;
}

/**
 * Builds the MCP server of MCI on the SDK's low-level `Server` (the tools' schemas are JSON Schema
 * from the tool file, which the high-level `McpServer` does not take): `run_code`, every MCI tool,
 * the `mci://tools.d.ts` resource, and tasks through the SDK's task handlers over a
 * {@link createProcessTaskStore process task store}. Every call is a process of `manager`.
 */
export function createMciMcpServer(options: MciMcpServerOptions): MciMcpServer {
  const { manager, principal, logger } = options;
  const maxText = options.responsePipeBytes ?? 16 * 1024;
  const maxTtl = options.maxTaskTtlMs ?? DEFAULT_MAX_TASK_TTL_MS;
  const toolsDts = renderSandboxGlobals(options.tools);
  const catalog = options.catalog ?? createToolCatalog(options.tools);
  const byName = new Map<string, ResolvedTool>();
  const definitions: Tool[] = [
    runCodeTool({
      toolsDts,
      openWorld: options.openWorld ?? true,
      ...(options.maxInlineDtsBytes !== undefined && { maxInlineBytes: options.maxInlineDtsBytes }),
    }),
  ];
  definitions.push(searchToolsTool, describeToolTool);
  for (const tool of options.tools) {
    if (tool.name === RUN_CODE || tool.name === SEARCH_TOOLS || tool.name === DESCRIBE_TOOL) {
      logger?.warn({ tool: tool.name }, 'MCI tool not exposed directly over MCP: its name is taken');
      continue;
    }
    byName.set(tool.name, tool);
    definitions.push(mciToolDefinition(tool));
  }

  const resultOf = async (pid: number): Promise<CallToolResult> => {
    const result = await manager.getResult(pid, principal);
    const tool = mcpCallOf(result.metadata)?.tool;
    return tool === RUN_CODE || (tool?.startsWith(SKILL_TOOL_PREFIX) && !byName.has(tool))
      ? runCodeResult(result, maxText)
      : directToolResult(result, maxText);
  };
  const taskStore = createProcessTaskStore({
    manager,
    principal,
    listable: options.listTasks,
    resultOf,
  });
  const server = new Server(options.serverInfo ?? { name: 'mci-server', version: '0.1.0' }, {
    capabilities: {
      tools: { listChanged: false },
      resources: { listChanged: false },
      tasks: {
        ...(options.listTasks && { list: {} }),
        cancel: {},
        requests: { tools: { call: {} } },
      },
    },
    taskStore,
  });
  const relay = new ProgressRelay({ manager, server, ...(logger && { logger }) });
  const prompts =
    options.approvals && new ApprovalPrompts(server, manager, options.approvals, principal, logger);
  // The approval tools are listed when some tool asks (at the session's start), not to every client.
  const approvals = options.approvals;
  const asks =
    approvals !== undefined &&
    options.tools.some((tool) => approvals.decisionFor(approvals.describe(tool.name)).decision === 'ask');
  if (prompts && asks) definitions.push(...approvalTools);
  let tasksNegotiated = false;
  let closing: Promise<void> | undefined;

  /** The caller's skills as tools, read at each listing (a skill saved since shows up). */
  const skillTools = async (): Promise<Tool[]> =>
    options.skills
      ? (await options.skills.all(principal))
          .map(skillToolDefinition)
          .filter((tool) => !byName.has(tool.name) && !definitions.some((d) => d.name === tool.name))
      : [];
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [...definitions, ...(await skillTools())],
  }));
  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: [
      {
        uri: TOOLS_DTS_URI,
        name: 'tools.d.ts',
        title: 'TypeScript declarations of the sandbox globals and tools',
        mimeType: 'application/typescript',
        size: Buffer.byteLength(toolsDts),
      },
    ],
  }));
  // Every resource is listed above: there are no templates to fill in.
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [] }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    if (request.params.uri !== TOOLS_DTS_URI)
      throw new McpError(ErrorCode.InvalidParams, `Resource not found: ${request.params.uri}`);
    return { contents: [{ uri: TOOLS_DTS_URI, mimeType: 'application/typescript', text: toolsDts }] };
  });

  const plan = (name: string, args: Record<string, unknown>): CallPlan => {
    if (name === RUN_CODE) return runCodePlan(args);
    if (name === SEARCH_TOOLS) return { kind: 'answer', result: searchToolsResult(catalog, args) };
    if (name === DESCRIBE_TOOL) return { kind: 'answer', result: describeToolResult(catalog, args) };
    const tool = byName.get(name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Tool ${name} not found`);
    return { kind: 'tool', tool, args };
  };

  const inFlight = new Set<Promise<unknown>>();
  const track = <T>(work: Promise<T>): Promise<T> => {
    inFlight.add(work);
    const done = () => inFlight.delete(work);
    work.then(done, done);
    return work;
  };

  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    track(
      traceMessage(
        `tools/call ${request.params.name}`,
        metaCarrier(request.params._meta),
        {
          [ATTR_MCP_METHOD_NAME]: 'tools/call',
          [ATTR_GEN_AI_TOOL_NAME]: request.params.name,
          [ATTR_MCP_SESSION_ID]: options.sessionId,
        },
        () => callTool(request, extra),
      ),
    ),
  );

  async function callTool(
    request: CallToolRequest,
    extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  ): Promise<CallToolResult | CreateTaskResult> {
    const { name, task } = request.params;
    if (prompts && (name === LIST_APPROVALS || name === DECIDE_APPROVAL)) {
      try {
        return await prompts.call(name, request.params.arguments ?? {});
      } catch (error) {
        if (!(error instanceof ServerError)) throw error;
        return { isError: true, content: [{ type: 'text', text: error.message }] };
      }
    }
    const args = request.params.arguments ?? {};
    const isSkill = name.startsWith(SKILL_TOOL_PREFIX) && !byName.has(name) && options.skills !== undefined;
    if (isSkill && !(await skillTools()).some((tool) => tool.name === name))
      throw new McpError(ErrorCode.InvalidParams, `Tool ${name} not found`);
    const call: CallPlan = isSkill
      ? { kind: 'skill', skill: name.slice(SKILL_TOOL_PREFIX.length), args }
      : plan(name, args);
    if (call.kind === 'answer') return call.result;
    const definition = definitions.find((tool) => tool.name === name);
    if (task && definition?.execution?.taskSupport !== 'optional')
      throw new McpError(ErrorCode.MethodNotFound, `Tool ${name} does not run as a task`);
    // A ttl that is absent or not a positive number gets the maximum.
    const asked = task?.ttl;
    const ttl = task ? Math.min(asked !== undefined && asked > 0 ? asked : maxTtl, maxTtl) : undefined;
    const mcp: McpCallMetadata = {
      session: options.sessionId,
      tool: name,
      principal: principal.id,
      ...(ttl !== undefined && { task: { ttl } }),
    };
    const ref = (call.kind === 'run_code' ? call.ref : undefined) ?? `mcp:${options.sessionId}`;
    const creating = manager.create(
      processInputOf(call, { ref, metadata: { mcp }, session: `mcp-${options.sessionId}` }),
      principal,
    );
    // What the process does while its creation is committed is relayed once it is watched.
    const held = relay.hold();
    let pid: number;
    try {
      pid = (await creating).pid;
    } catch (error) {
      relay.release(held);
      throw toMcpError(error);
    }
    const progressToken = extra._meta?.progressToken;
    if (task && ttl !== undefined) {
      relay.watch(pid, { progressToken, task: { ttl } }, held);
      const created = await extra.taskStore?.createTask({ ttl, context: { pid } });
      if (!created) throw new McpError(ErrorCode.InternalError, 'tasks are not configured');
      return { task: created };
    }
    relay.watch(pid, { progressToken, relatedRequestId: extra.requestId }, held);
    const kill = () => {
      manager.signal(pid, 'kill', principal).catch(() => {
        // Already idle: nothing to stop.
      });
    };
    extra.signal.addEventListener('abort', kill, { once: true });
    let progressSent = 0;
    const stopAsking = prompts?.watch(pid, { relatedRequestId: extra.requestId });
    try {
      await manager.wait(pid, principal);
    } finally {
      stopAsking?.();
      extra.signal.removeEventListener('abort', kill);
      progressSent = relay.unwatch(pid);
    }
    // The SDK's client drops progress read in the same chunk as the response (it dispatches
    // notifications a microtask late): the answer goes out one turn after the last progress.
    // https://github.com/modelcontextprotocol/typescript-sdk/issues/2580
    if (progressSent > 0) await new Promise((resolve) => setImmediate(resolve));
    return resultOf(pid);
  }

  // tasks/result waits for the process itself (the SDK's default handler polls at pollInterval).
  server.setRequestHandler(GetTaskPayloadRequestSchema, (request, extra) =>
    track(taskResult(request.params.taskId, extra.signal, extra.requestId)),
  );

  async function taskResult(taskId: string, signal: AbortSignal, requestId: string | number) {
    const pid = await taskStore.pidOf(taskId);
    if (pid === undefined) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
    // A task that is input_required asks its approvals while its result is awaited (MCP tasks).
    const stopAsking = prompts?.watch(pid, { relatedRequestId: requestId }, taskId);
    signal.addEventListener('abort', () => stopAsking?.(), { once: true });
    const aborted = new Promise<never>((_, reject) => {
      const fail = () => reject(new McpError(ErrorCode.InvalidRequest, 'Request cancelled'));
      if (signal.aborted) fail();
      else signal.addEventListener('abort', fail, { once: true });
    });
    try {
      await Promise.race([manager.wait(pid, principal), aborted]);
    } finally {
      stopAsking?.();
    }
    const result = await resultOf(pid);
    return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
  }

  return {
    server,
    async connect(transport) {
      // Runs before the SDK's own handler (Protocol.connect chains an onmessage set beforehand): it
      // learns the negotiated version, and strips `task` from the calls of a client that did not
      // negotiate tasks, so they run synchronously as the spec requires.
      transport.onmessage = (message) => {
        if (!isJSONRPCRequest(message)) return;
        if (message.method === 'initialize') {
          const requested = String(message.params?.protocolVersion);
          const version = SUPPORTED_PROTOCOL_VERSIONS.includes(requested)
            ? requested
            : LATEST_PROTOCOL_VERSION;
          tasksNegotiated = version >= TASKS_PROTOCOL_VERSION;
        } else if (!tasksNegotiated && message.params && 'task' in message.params) {
          delete message.params.task;
        }
      };
      sendPlainErrorMessages(transport);
      await server.connect(transport);
    },
    async drain() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      // The answers are sent in a continuation of each handler.
      await new Promise((resolve) => setImmediate(resolve));
    },
    close() {
      closing ??= (async () => {
        relay.close();
        await server.close();
      })();
      return closing;
    },
  };
}

/**
 * Errors of process creation as MCP errors: bad input is -32602; a full queue, a quota, an unavailable
 * store and other server errors -32603, with the server's `code` (and `retryAfter`, seconds) in `data`.
 */
function toMcpError(error: unknown): McpError {
  if (error instanceof McpError) return error;
  if (!(error instanceof ServerError || error instanceof StoreError))
    return new McpError(ErrorCode.InternalError, error instanceof Error ? error.message : String(error));
  const serverError = toServerError(error);
  const invalid = serverError.code === 'VALIDATION' || serverError.code === 'CODE_TOO_LARGE';
  return new McpError(invalid ? ErrorCode.InvalidParams : ErrorCode.InternalError, serverError.message, {
    code: serverError.code,
    ...(serverError.path !== undefined && { path: serverError.path }),
    ...(serverError.retryAfter !== undefined && { retryAfter: serverError.retryAfter }),
  });
}
