import { Redactor } from '@mci/schema';
import { redactingTools } from '../secrets/server-secrets.ts';
import type { Readable, Writable } from 'node:stream';
import { createIntentStream } from '@mci/intent-extractor';
import { createSandboxPool } from '@mci/sandbox';
import type { ResolvedTool } from '@mci/schema';
import type { ToolRunner } from '@mci/tools';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Logger } from 'pino';
import { LOCAL_OPERATOR } from '../auth/principal.ts';
import { LimitsSchema } from '../config/config-schema.ts';
import { createProcessManager } from '../processes/process-manager.ts';
import { processSessions } from '../sessions/process-sessions.ts';
import { SessionStore } from '../sessions/session-store.ts';
import { createToolCatalog } from '../tool-search/tool-catalog.ts';
import { createMciMcpServer } from './mcp-server.ts';

/** How long runs under way may go on once the client closed stdin, in ms. */
const STDIN_CLOSED_GRACE_MS = 5_000;

/** What {@link serveMcpStdio} runs. */
export interface McpStdioOptions {
  /** The runner of the loaded tool file (closed with the server). */
  runner: ToolRunner;
  /** The tools exposed and callable from `run_code` (already filtered). */
  tools: readonly ResolvedTool[];
  stdin: Readable;
  stdout: Writable;
  /** Logs go here, never to stdout (which carries the protocol). */
  logger: Logger;
  /** Sandbox workers. @default 2 */
  concurrency?: number;
  allowNet?: string[];
  /** Default run timeout in ms. @default 30000 */
  timeoutMs?: number;
  /** Default isolate memory limit in MiB. @default 128 */
  memoryLimitMb?: number;
  /** Secret values taken out of tool results, outputs, logs and errors. @default nothing is redacted */
  redactor?: Redactor;
}

/**
 * `mci mcp`: an MCP server on stdin/stdout with its own sandbox pool and process manager (processes
 * and the `state` of its session in memory, every call one of them). Resolves when the client closes stdin, after every process has
 * been stopped and the pool and tools released.
 */
export async function serveMcpStdio(options: McpStdioOptions): Promise<void> {
  const names = new Set(options.tools.map((tool) => tool.name));
  const catalog = createToolCatalog(options.tools);
  const pool = createSandboxPool({ size: options.concurrency ?? 2, allowNet: options.allowNet ?? [] });
  // State lives in memory like the processes: it lasts as long as this MCP server.
  const limits = LimitsSchema.parse({});
  const sessions = await SessionStore.inMemory({
    valueBytes: limits.stateValueBytes,
    sessionBytes: limits.stateSessionBytes,
  });
  const manager = await createProcessManager({
    pool,
    // run_code sees the same (filtered) tools as the client does.
    tools: redactingTools(
      {
        list: () => [...options.tools],
        execute: (name, props, executeOptions) => {
          if (!names.has(name)) return Promise.reject(new Error(`Tool "${name}" not found`));
          return options.runner.execute(name, props, executeOptions);
        },
        catalog,
      },
      options.redactor ?? new Redactor(),
    ),
    ...(options.redactor && { redactor: options.redactor }),
    createIntentStream,
    sessions: processSessions(sessions, options.redactor),
    defaults: { timeoutMs: options.timeoutMs ?? 30_000, memoryLimitMb: options.memoryLimitMb ?? 128 },
    logger: options.logger,
  });
  const mcp = createMciMcpServer({
    manager,
    principal: LOCAL_OPERATOR,
    sessionId: 'stdio',
    tools: options.tools,
    catalog,
    // One local client owns this process: its tasks are listable.
    listTasks: true,
    logger: options.logger,
  });
  const transport = new StdioServerTransport(options.stdin, options.stdout);
  const closed = new Promise<void>((resolve) => {
    mcp.server.onclose = resolve;
  });
  await mcp.connect(transport);
  // The client is done: let the runs under way finish (a short grace) and their answers go out.
  options.stdin.once('end', () => {
    void (async () => {
      try {
        await manager.shutdown({ graceMs: STDIN_CLOSED_GRACE_MS });
        await mcp.drain();
      } catch (error) {
        options.logger.error({ err: error }, 'MCP server on stdio: draining after stdin closed failed');
      } finally {
        // Always close: the process waits for the server's close to end.
        await mcp.close();
      }
    })();
  });
  options.logger.info({ tools: options.tools.length }, 'MCP server on stdio');
  await closed;
  // Nothing else may hold the event loop now: without this timer Node can exit (code 13) while the
  // pool still waits for its workers' exit events.
  const keepAlive = setInterval(() => {}, 1000);
  try {
    await manager.shutdown({ graceMs: 0 });
    await options.runner.close();
    await pool.close();
    sessions.close();
  } finally {
    clearInterval(keepAlive);
  }
}
