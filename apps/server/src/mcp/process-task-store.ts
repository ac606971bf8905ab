import {
  DEFAULT_PAGE_LIMIT,
  MAX_PAGE_LIMIT,
  type Page,
  type PageRequest,
  type ProcessSnapshot,
} from '@mci/protocol';
import type {
  CreateTaskOptions,
  TaskStore,
} from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { ErrorCode, McpError, type Result, type Task } from '@modelcontextprotocol/sdk/types.js';
import { encodeCursor } from '../paging/cursor.ts';
import type { Principal, ProcessManager } from '../processes/process-manager-types.ts';
import { ServerError } from '../processes/server-error.ts';
import { mcpCallOf, pidOfTaskId, taskIdOf, taskOf } from './process-task.ts';

/** Pages of 100 processes one `tasks/list` request reads at most while it gathers a page of tasks. */
const TASK_SCAN_PAGES = 10;

/** What {@link createProcessTaskStore} needs. */
export interface ProcessTaskStoreOptions {
  manager: ProcessManager;
  /** The caller: it sees its own tasks only. */
  principal: Principal;
  /** Whether `tasks/list` answers (false on HTTP without tokens, per the spec's security guidance). */
  listable: boolean;
  /** The MCP result of a finished process (run_code's or a direct tool's, after its metadata). */
  resultOf: (pid: number) => Promise<Result>;
}

/** A {@link TaskStore} whose tasks are processes, plus the lookups the MCP server needs. */
export interface ProcessTaskStore extends TaskStore {
  /** The pid of a task of this caller, or undefined (unknown, another caller's, not a task). */
  pidOf(taskId: string): Promise<number | undefined>;
}

/**
 * The SDK's task store over the process manager: the task **is** the process. A task-augmented call
 * creates its process first (with `metadata.mcp.task`), then `createTask` returns that process's task;
 * `getTask` maps the live process, `updateTaskStatus('cancelled')` sends it the kill signal and
 * resolves once it has ended (so `tasks/cancel` answers with the ended run), and
 * results are the processes' own. Nothing is kept here, so tasks live exactly as long as their
 * processes (and survive a restart on a durable store).
 * @see https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks
 */
export function createProcessTaskStore(options: ProcessTaskStoreOptions): ProcessTaskStore {
  const { manager, principal } = options;

  const lookup = async (taskId: string): Promise<Task | undefined> => {
    const pid = pidOfTaskId(taskId);
    if (pid === undefined) return undefined;
    let snapshot: ProcessSnapshot;
    try {
      snapshot = await manager.get(pid, principal);
    } catch (error) {
      if (error instanceof ServerError && error.code === 'NOT_FOUND') return undefined;
      throw error;
    }
    const call = mcpCallOf(snapshot.metadata);
    if (!call?.task || call.principal !== principal.id) return undefined;
    return taskOf(snapshot, call.task.ttl);
  };

  const pidOf = async (taskId: string) => ((await lookup(taskId)) ? pidOfTaskId(taskId) : undefined);

  return {
    pidOf,
    async createTask(params: CreateTaskOptions): Promise<Task> {
      const pid = params.context?.pid;
      const task = typeof pid === 'number' ? await lookup(taskIdOf(pid)) : undefined;
      if (!task) throw new McpError(ErrorCode.InternalError, 'a task is created from its process');
      return task;
    },
    async getTask(taskId) {
      return (await lookup(taskId)) ?? null;
    },
    async storeTaskResult() {
      throw new McpError(ErrorCode.InternalError, "a task's result is its process's result");
    },
    async getTaskResult(taskId) {
      const pid = await pidOf(taskId);
      if (pid === undefined) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
      await manager.wait(pid, principal);
      return options.resultOf(pid);
    },
    async updateTaskStatus(taskId, status) {
      const pid = await pidOf(taskId);
      if (pid === undefined) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
      if (status !== 'cancelled')
        throw new McpError(ErrorCode.InvalidParams, `a task's status follows its process (${status})`);
      try {
        const killed = await manager.signal(pid, 'kill', principal);
        // A running process ends within the kill's bound: wait for it, so the answer (the SDK reads
        // the task again) carries the ended run's time and message, not the start's.
        if (killed.state !== 'idle') await manager.wait(pid, principal);
      } catch (error) {
        // The process became idle since the caller's look-up: the task is terminal now.
        if (error instanceof ServerError && error.code === 'CONFLICT')
          throw new McpError(ErrorCode.InvalidParams, `Cannot cancel task in terminal status: ${taskId}`);
        throw error;
      }
    },
    async listTasks(cursor) {
      if (!options.listable)
        throw new Error('tasks/list needs an authenticated caller: configure tokens on the server');
      // Newest first, paged over the caller's processes by pid: a page scans at most
      // TASK_SCAN_PAGES pages of processes, so one with fewer tasks (even none) may still go on.
      let request: PageRequest = cursor === undefined ? {} : { cursor };
      const tasks: Task[] = [];
      for (let scanned = 0; scanned < TASK_SCAN_PAGES; scanned++) {
        let page: Page<ProcessSnapshot>;
        try {
          page = await manager.list({ ...request, limit: MAX_PAGE_LIMIT }, principal);
        } catch (error) {
          if (error instanceof ServerError && error.code === 'VALIDATION')
            throw new McpError(ErrorCode.InvalidParams, `invalid cursor: ${cursor}`);
          throw error;
        }
        for (const snapshot of page.items) {
          const call = mcpCallOf(snapshot.metadata);
          if (!call?.task || call.principal !== principal.id) continue;
          tasks.push(taskOf(snapshot, call.task.ttl));
          if (tasks.length === DEFAULT_PAGE_LIMIT) return { tasks, nextCursor: encodeCursor([snapshot.pid]) };
        }
        if (page.nextCursor === undefined) return { tasks };
        request = { cursor: page.nextCursor };
      }
      return { tasks, nextCursor: request.cursor };
    },
  };
}
