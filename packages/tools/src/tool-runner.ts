import type { Annotations, Redactor, ResolvedTool, ToolCollection } from '@mci/schema';
import { trace } from '@opentelemetry/api';
import { envByTool, type ToolEnvVariable } from './env-usage.ts';
import { raceAbort } from './race-abort.ts';
import { executeCli } from './cli/cli-executor.ts';
import type { ExecutionContext } from './execution-context.ts';
import { executeFile } from './file-executor.ts';
import { HttpClient } from './http/http-client.ts';
import { executeHttp } from './http/http-executor.ts';
import { McpConnections } from './mcp/mcp-connections.ts';
import { executeMcp } from './mcp/mcp-executor.ts';
import { type PathPolicy, pathPolicyFor } from './path-policy.ts';
import { PropsValidator } from './props-validator.ts';
import { executeText } from './text-executor.ts';
import { messageOf, ToolError } from './tool-error.ts';
import { canceledResult, errorResult, type ToolResult } from './tool-result.ts';

/** What {@link ToolRunner.list} says about a tool. */
export interface ToolInfo {
  name: string;
  title?: string;
  description?: string;
  tags: string[];
  annotations?: Annotations;
  inputSchema?: Record<string, unknown>;
  /** The toolset or MCP server the tool came from; absent for main-file tools. */
  toolset?: string;
  /**
   * The environment variables the tool reads through `{{env.X}}` (its MCP server's config included)
   * and whether each is set; never their values. Absent when it reads none.
   */
  env?: ToolEnvVariable[];
}

/** Options of {@link createToolRunner}. */
export interface ToolRunnerOptions {
  /**
   * Explicit environment values, merged over `process.env` (explicit values win). The merged
   * environment is `env` in templates and the environment of cli commands.
   */
  env?: Record<string, string | undefined>;
  /**
   * Bytes of stdout (and of stderr) a cli tool keeps (the rest is counted and dropped), and the
   * largest HTTP response body and file that http and file tools accept. @default 10485760 (10 MiB)
   */
  maxOutputBytes?: number;
  /** Cancels every execution of this runner. */
  signal?: AbortSignal;
  /**
   * Secret values taken out of what the tools' trace spans record (the `url.full` of http tools).
   * @default only a URL's password and credential query values are taken out
   */
  redactor?: Redactor;
}

/** Options of one {@link ToolRunner.execute} call. */
export interface ExecuteOptions {
  /** Cancels this execution: HTTP requests are aborted, cli process groups killed. */
  signal?: AbortSignal;
}

/** Executes the tools of one collection. Safe to call concurrently. */
export interface ToolRunner {
  /**
   * Validates `props` against the tool's inputSchema (defaults applied) and executes the tool.
   * Never rejects for the tool's own failure (that is an `isError` result), nor for cancellation
   * (an `isError` result with `metadata.canceled`).
   *
   * @throws {ToolError} `TOOL_NOT_FOUND` when no enabled tool has that name.
   */
  execute(name: string, props?: unknown, options?: ExecuteOptions): Promise<ToolResult>;
  /** The enabled tools, in collection order. */
  list(): ToolInfo[];
  /**
   * Cancels executions in flight, closes MCP connections (stopping stdio servers) and the HTTP
   * connection pool. Idempotent.
   */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Default cap of captured cli output, per stream: 10 MiB. */
export const DEFAULT_MAX_OUTPUT_BYTES = 10 * 1024 * 1024;

/**
 * Creates a runner for a loaded collection (from `loadTools`). HTTP connections and MCP connections
 * open lazily and are shared by all executions until {@link ToolRunner.close}.
 */
export function createToolRunner(collection: ToolCollection, options: ToolRunnerOptions = {}): ToolRunner {
  const env: Record<string, string | undefined> = { ...process.env, ...options.env };
  const maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const validator = new PropsValidator();
  const http = new HttpClient(maxOutputBytes, options.redactor);
  const mcp = new McpConnections(collection.mcpServers, env);
  const envs = envByTool(collection, env);
  // Loaded tools never change, so neither do their path policies.
  const policies = new WeakMap<ResolvedTool, PathPolicy>();
  const pathsOf = (tool: ResolvedTool) => {
    let policy = policies.get(tool);
    if (!policy) {
      policy = pathPolicyFor(collection.dir, collection, tool);
      policies.set(tool, policy);
    }
    return policy;
  };
  let closing: Promise<void> | undefined;
  // Aborted by close() and by the runner's own signal: every execution listens to it.
  const lifetime = new AbortController();
  if (options.signal?.aborted) lifetime.abort(options.signal.reason);
  else
    options.signal?.addEventListener('abort', () => lifetime.abort(options.signal?.reason), { once: true });
  // An aborted runner runs nothing more: its MCP connections close, ending the calls in flight (so
  // an MCP call needs no signal of its own for the runner's abort).
  lifetime.signal.addEventListener('abort', () => void mcp.close(), { once: true });

  const run = (tool: ResolvedTool, ctx: ExecutionContext): Promise<ToolResult> => {
    const execution = tool.execution;
    switch (execution.type) {
      case 'text':
        return executeText(execution, ctx);
      case 'file':
        return executeFile(execution, ctx);
      case 'cli':
        return executeCli(execution, ctx);
      case 'http':
        return executeHttp(execution, ctx, http);
      case 'mcp':
        return executeMcp(execution, ctx, mcp.get(execution.serverName));
    }
  };

  const close = () => {
    if (!closing) {
      lifetime.abort(new Error('the tool runner was closed'));
      closing = Promise.all([http.close(), mcp.close()]).then(() => {});
    }
    return closing;
  };

  return {
    async execute(name, props, executeOptions = {}) {
      const tool = collection.get(name);
      if (!tool) throw new ToolError('TOOL_NOT_FOUND', notFoundMessage(name, collection));
      if (closing) return errorResult('The tool runner is closed');
      const signal = executeOptions.signal
        ? AbortSignal.any([lifetime.signal, executeOptions.signal])
        : lifetime.signal;
      if (signal.aborted) return canceledResult(signal.reason);
      const validation = validator.validate(tool.inputSchema, props);
      if (!validation.ok) return errorResult(validation.message);
      const validProps = validation.props as Record<string, unknown>;
      const ctx: ExecutionContext = {
        tool,
        props: validProps,
        template: { props: validProps, input: validProps, env },
        env,
        paths: pathsOf(tool),
        signal,
        callerSignal: executeOptions.signal,
        maxOutputBytes,
      };
      try {
        // The race makes cancellation immediate while a cli or file executor cleans up (kill, close);
        // http requests and MCP calls (and waits for their connections) end at once by themselves,
        // and text renders synchronously, so they skip it.
        const type = tool.execution.type;
        // The caller's span of this call (the server's `execute_tool`) learns the executor.
        trace.getActiveSpan()?.setAttribute('mci.tool.type', type);
        const pending = run(tool, ctx);
        return await (type === 'cli' || type === 'file' ? raceAbort(pending, signal) : pending);
      } catch (error) {
        if (signal.aborted) return canceledResult(signal.reason);
        return errorResult(messageOf(error));
      }
    },
    list: () => collection.tools.map((tool) => toolInfo(tool, envs.get(tool.name))),
    close,
    [Symbol.asyncDispose]: close,
  };
}

function toolInfo(tool: ResolvedTool, env: ToolEnvVariable[] | undefined): ToolInfo {
  const info: ToolInfo = { name: tool.name, tags: [...tool.tags] };
  if (tool.title !== undefined) info.title = tool.title;
  if (tool.description !== undefined) info.description = tool.description;
  if (tool.annotations !== undefined) info.annotations = tool.annotations;
  if (tool.inputSchema !== undefined) info.inputSchema = tool.inputSchema;
  if (tool.toolset !== undefined) info.toolset = tool.toolset;
  if (env !== undefined) info.env = env;
  return info;
}

function notFoundMessage(name: string, collection: ToolCollection): string {
  const names = collection.tools.map((tool) => tool.name);
  const shown = names.length > 20 ? `${names.slice(0, 20).join(', ')}, ...` : names.join(', ');
  return `Tool "${name}" not found${names.length ? ` (available: ${shown})` : ' (the collection has no tools)'}`;
}
