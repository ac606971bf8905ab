import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  type CallToolResult,
  CallToolResultSchema,
  CreateTaskResultSchema,
  RELATED_TASK_META_KEY,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { httpClient, mcpSuiteServer, suiteClient } from './support/mcp-fixture.ts';

// MCP Tasks backed by processes, through the SDK's own Client over stdio and Streamable HTTP: a
// task-augmented call answers at once and is polled to completion, a cancel kills the process,
// progress notifications arrive in order, and (HTTP with tokens) a client sees only its own tasks.

const suite = mcpSuiteServer();

const startTask = (client: Client, name: string, args: Record<string, unknown>, ttl = 60_000) =>
  client.request(
    { method: 'tools/call', params: { name, arguments: args, task: { ttl } } },
    CreateTaskResultSchema,
  );

async function pollUntilTerminal(client: Client, taskId: string): Promise<Task> {
  for (;;) {
    const task = await client.experimental.tasks.getTask(taskId);
    if (task.status !== 'working') return task;
    await new Promise((resolve) => setTimeout(resolve, task.pollInterval ?? 100));
  }
}

/** The result of task `taskId`, waiting for the task to end. */
const taskResult = async (client: Client, taskId: string) =>
  (await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)) as CallToolResult;

const { transports } = suite;

describe.each(transports)('MCP tasks over %s', (name, connect) => {
  const mcp = suiteClient(connect);

  it('declares the tasks capability', () => {
    expect(mcp.client.getServerCapabilities()?.tasks).toMatchObject({
      cancel: {},
      requests: { tools: { call: {} } },
    });
  });

  it('answers a task-augmented run_code at once and is polled to completion', async () => {
    const { task } = await startTask(mcp.client, 'run_code', {
      code: 'let n = 0; for (let i = 0; i < 2e7; i++) n += i; output(n)',
    });
    expect(task.status).toBe('working');
    expect(task.taskId).toMatch(/^process-\d+$/);
    expect(task.ttl).toBe(60_000);
    const done = await pollUntilTerminal(mcp.client, task.taskId);
    expect(done.status).toBe('completed');
    const result = await taskResult(mcp.client, task.taskId);
    expect(result.structuredContent).toMatchObject({ status: 'success', outputs: [199999990000000] });
    expect(result._meta?.[RELATED_TASK_META_KEY]).toEqual({ taskId: task.taskId });
    if (name === 'Streamable HTTP') {
      const pid = Number(task.taskId.slice('process-'.length));
      const response = await fetch(`${suite.server.url}/processes/${pid}`);
      expect(await response.json()).toMatchObject({
        pid,
        status: 'success',
        metadata: { mcp: { tool: 'run_code' } },
      });
    }
  });

  it('maps a failed run to a failed task whose result is the run_code result', async () => {
    const { task } = await startTask(mcp.client, 'run_code', { code: 'throw new TypeError("bad")' });
    const result = await taskResult(mcp.client, task.taskId);
    expect(result.isError).toBe(true);
    expect((await mcp.client.experimental.tasks.getTask(task.taskId)).status).toBe('failed');
  });

  it('runs a slow MCI tool (cli) as a task', async () => {
    const { task } = await startTask(mcp.client, 'shout', { word: 'task' });
    const result = await taskResult(mcp.client, task.taskId);
    expect(result.content).toEqual([{ type: 'text', text: 'TASK\n' }]);
  });

  it('refuses a task for a tool whose task support is forbidden', async () => {
    await expect(startTask(mcp.client, 'greet', { name: 'Ada' })).rejects.toThrow(/does not run as a task/);
  });

  it('cancels a running task: the process ends canceled, a second cancel is -32602', async () => {
    let sawOutput: () => void = () => {};
    const running = new Promise<void>((resolve) => {
      sawOutput = resolve;
    });
    const { task } = await mcp.client.request(
      {
        method: 'tools/call',
        params: {
          name: 'run_code',
          arguments: { code: 'output("started"); for (;;) {}' },
          task: { ttl: 60_000 },
        },
      },
      CreateTaskResultSchema,
      { onprogress: (progress) => progress.message === 'output: "started"' && sawOutput() },
    );
    await running;
    const before = Date.now();
    const cancelled = await mcp.client.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled.status).toBe('cancelled');
    // The answer is the cancelled task as it is now: updated at the cancel, with its message.
    expect(Date.parse(cancelled.lastUpdatedAt)).toBeGreaterThanOrEqual(before);
    expect(cancelled.statusMessage).toMatch(/kill/i);
    const result = await taskResult(mcp.client, task.taskId);
    // Canceled by the kill, not ended by the loop's own timeout.
    expect(result.structuredContent).toMatchObject({ status: 'canceled', outputs: ['started'] });
    await expect(mcp.client.experimental.tasks.cancelTask(task.taskId)).rejects.toMatchObject({
      code: -32602,
    });
  });

  it('sends progress notifications in order for output() and console lines', async () => {
    const progress: Array<{ progress: number; message?: string }> = [];
    const result = (await mcp.client.callTool(
      {
        name: 'run_code',
        // The pause keeps the last progress out of the response's read: the SDK's client drops progress
        // that arrives in one read with the response (typescript-sdk#2580).
        arguments: {
          code: 'output(1); console.log("a\\nb"); console.error("c"); output({ x: 2 })\nconst end = Date.now() + 300; while (Date.now() < end) {}',
        },
      },
      undefined,
      { onprogress: (params) => progress.push(params) },
    )) as CallToolResult;
    expect(result.isError).toBe(false);
    expect(progress.map((p) => p.message)).toEqual([
      'output: 1',
      'stdout: a',
      'stdout: b',
      'stderr: c',
      'output: {"x":2}',
    ]);
    expect(progress.map((p) => p.progress)).toEqual([1, 2, 3, 4, 5]);
  });

  it('sends task status notifications up to the terminal status', async () => {
    const statuses: string[] = [];
    const { TaskStatusNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
    let taskId = '';
    const terminal = new Promise<void>((resolve) => {
      mcp.client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
        if (notification.params.taskId !== taskId) return;
        statuses.push(notification.params.status);
        if (notification.params.status === 'completed') resolve();
      });
    });
    ({
      task: { taskId },
    } = await startTask(mcp.client, 'run_code', { code: 'output(1)' }));
    await terminal;
    expect(statuses.at(-1)).toBe('completed');
  });
});

describe('MCP calls are processes of the server', () => {
  it('an operator kills a synchronous run_code through the HTTP API; the call answers canceled', async () => {
    const client = await httpClient(suite.server.url);
    try {
      const call = client.callTool({ name: 'run_code', arguments: { code: 'for (;;) {}', ref: 'op-kill' } });
      let pid: number | undefined;
      while (pid === undefined) {
        const listing = (await (
          await fetch(`${suite.server.url}/processes?ref=op-kill&state=running`)
        ).json()) as {
          processes: Array<{ pid: number }>;
        };
        pid = listing.processes[0]?.pid;
      }
      const killed = await fetch(`${suite.server.url}/processes/${pid}/signals/kill`, { method: 'POST' });
      expect(killed.ok).toBe(true);
      const result = (await call) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ pid, status: 'canceled' });
    } finally {
      await client.close();
    }
  });
});

describe('MCP tasks over Streamable HTTP with tokens', () => {
  const secured = mcpSuiteServer({
    concurrency: 1,
    tokens: [
      { token: 'alice-secret', role: 'client', id: 'alice' },
      { token: 'bob-secret', role: 'client', id: 'bob' },
    ],
  });

  it('refuses /mcp without a token', async () => {
    await expect(httpClient(secured.server.url)).rejects.toThrow();
  });

  it("shows a client its own tasks and processes only, and the client's ref", async () => {
    const alice = await httpClient(secured.server.url, 'alice-secret');
    const bob = await httpClient(secured.server.url, 'bob-secret');
    try {
      const { task } = await startTask(alice, 'run_code', { code: 'output(1)', ref: 'alice-job' });
      await alice.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      expect((await alice.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).toContain(task.taskId);
      expect((await bob.experimental.tasks.listTasks()).tasks).toEqual([]);
      await expect(bob.experimental.tasks.getTask(task.taskId)).rejects.toMatchObject({ code: -32602 });
      await expect(
        bob.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema),
      ).rejects.toMatchObject({ code: -32602 });
      await expect(bob.experimental.tasks.cancelTask(task.taskId)).rejects.toMatchObject({ code: -32602 });
      const listing = async (token: string) =>
        (await (
          await fetch(`${secured.server.url}/processes?ref=alice-job`, {
            headers: { Authorization: `Bearer ${token}` },
          })
        ).json()) as { processes: Array<{ pid: number }> };
      expect((await listing('alice-secret')).processes).toHaveLength(1);
      expect((await listing('bob-secret')).processes).toHaveLength(0);
    } finally {
      await alice.close();
      await bob.close();
    }
  });

  // 55 runs on one sandbox worker: slow on a busy machine.
  it('pages tasks/list with a cursor, newest first', { timeout: 60_000 }, async () => {
    const alice = await httpClient(secured.server.url, 'alice-secret');
    try {
      const created: string[] = [];
      for (let i = 0; i < 55; i++)
        created.push((await startTask(alice, 'run_code', { code: `output(${i})` })).task.taskId);
      const first = await alice.experimental.tasks.listTasks();
      expect(first.tasks).toHaveLength(50);
      expect(first.nextCursor).toBeDefined();
      const second = await alice.experimental.tasks.listTasks(first.nextCursor);
      const listed = [...first.tasks, ...second.tasks].map((task) => task.taskId);
      // Newest first; tasks of the earlier tests of this block come after these 55.
      expect(listed.slice(0, 55)).toEqual([...created].reverse());
      expect(new Set(listed).size).toBe(listed.length);
      await expect(alice.experimental.tasks.listTasks('not-a-cursor')).rejects.toMatchObject({
        code: -32602,
      });
    } finally {
      await alice.close();
    }
  });

  it('withholds tasks/list without tokens on HTTP', async () => {
    const local = await httpClient(suite.server.url);
    try {
      expect(local.getServerCapabilities()?.tasks?.list).toBeUndefined();
      await expect(local.experimental.tasks.listTasks()).rejects.toThrow();
    } finally {
      await local.close();
    }
  });
});
