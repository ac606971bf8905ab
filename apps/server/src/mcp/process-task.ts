import type { ProcessMetadata, ProcessSnapshot } from '@mci/protocol';
import type { Task } from '@modelcontextprotocol/sdk/types.js';

/** How an MCP call is recorded in its process's `metadata.mcp`. */
export interface McpCallMetadata {
  /** The MCP session that made the call (`stdio` for `mci mcp`). */
  session: string;
  /** The tool called (`run_code` or an MCI tool's name). */
  tool: string;
  /** The principal id that made the call: tasks are listed for it alone. */
  principal: string;
  /** Present when the call was task-augmented: the task's ttl in ms (already clamped). */
  task?: { ttl: number };
}

/** Suggested interval between `tasks/get` polls, in ms. */
export const TASK_POLL_INTERVAL_MS = 250;

const TASK_ID = /^process-([1-9][0-9]{0,15})$/;

/** The task id of a process: `process-<pid>`, so a task survives a restart with its process. */
export const taskIdOf = (pid: number): string => `process-${pid}`;

/** The pid of a task id, or undefined when `taskId` is not one of ours. */
export function pidOfTaskId(taskId: string): number | undefined {
  const match = TASK_ID.exec(taskId);
  const pid = match ? Number(match[1]) : Number.NaN;
  return Number.isSafeInteger(pid) ? pid : undefined;
}

/** The `metadata.mcp` of a process made by an MCP call, if it is one. */
export function mcpCallOf(metadata: ProcessMetadata | undefined): McpCallMetadata | undefined {
  const mcp = metadata?.mcp as Partial<McpCallMetadata> | undefined;
  if (typeof mcp !== 'object' || mcp === null) return undefined;
  if (typeof mcp.session !== 'string' || typeof mcp.tool !== 'string' || typeof mcp.principal !== 'string')
    return undefined;
  return mcp as McpCallMetadata;
}

/**
 * The task status of a process: queued/running are `working`; `suspended` (an approval waits for a
 * person) is `input_required`; a kill under way (`terminating`) is
 * already `cancelled`, as the spec wants a cancelled task to say so in the `tasks/cancel` answer; idle
 * processes map their outcome (success `completed`, failed/timeout `failed`, canceled `cancelled`; one
 * that never ran, `failed`).
 * @see https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks#task-status
 */
export function taskStatusOf(snapshot: ProcessSnapshot): Task['status'] {
  switch (snapshot.state) {
    case 'queued':
    case 'running':
      return 'working';
    case 'suspended':
      return 'input_required';
    case 'terminating':
      return 'cancelled';
    case 'idle':
      if (snapshot.status === 'success') return 'completed';
      if (snapshot.status === 'canceled') return 'cancelled';
      return 'failed';
  }
}

function statusMessageOf(snapshot: ProcessSnapshot): string {
  if (snapshot.state === 'terminating') return `cancelled: process ${snapshot.pid} is being killed`;
  if (snapshot.state !== 'idle') return `process ${snapshot.pid} is ${snapshot.state}`;
  if (snapshot.status === 'timeout') return `timed out after ${snapshot.timeoutMs} ms`;
  if (snapshot.error) {
    const where = snapshot.error.line === undefined ? '' : ` (line ${snapshot.error.line})`;
    return `${snapshot.error.name}: ${snapshot.error.message}${where}`;
  }
  return snapshot.status === null ? 'not run' : snapshot.status;
}

/** The MCP task of a process created by a task-augmented call. */
export function taskOf(snapshot: ProcessSnapshot, ttl: number): Task {
  return {
    taskId: taskIdOf(snapshot.pid),
    status: taskStatusOf(snapshot),
    statusMessage: statusMessageOf(snapshot),
    createdAt: snapshot.createdAt,
    lastUpdatedAt: snapshot.endedAt ?? snapshot.startedAt ?? snapshot.queuedAt ?? snapshot.createdAt,
    ttl,
    pollInterval: TASK_POLL_INTERVAL_MS,
  };
}
