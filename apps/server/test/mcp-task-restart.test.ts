import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { createServer } from '../src/index.ts';
import { httpClient, makeToolFile } from './support/mcp-fixture.ts';

// The task is the process: on a durable store, a task created before a restart is found again by its
// id after it (from a new session of the same token), with its status and its result.

const fixture = makeToolFile();
const dir = mkdtempSync(join(tmpdir(), 'mci-mcp-restart-'));
afterAll(() => {
  fixture.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const start = () =>
  createServer({
    port: 0,
    file: fixture.file,
    logLevel: 'silent',
    concurrency: 1,
    db: join(dir, 'mci.db'),
    tokens: [{ token: 'alice-secret', role: 'client', id: 'alice' }],
  });

describe('MCP tasks across a restart', () => {
  it('keeps the task id, status and result of a finished task', async () => {
    let taskId: string;
    {
      await using server = await start();
      const client = await httpClient(server.url, 'alice-secret');
      const { task } = await client.request(
        {
          method: 'tools/call',
          params: { name: 'run_code', arguments: { code: 'output("kept")' }, task: {} },
        },
        CreateTaskResultSchema,
      );
      taskId = task.taskId;
      await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      await client.close();
    }
    await using server = await start();
    const client = await httpClient(server.url, 'alice-secret');
    try {
      expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({
        taskId,
        status: 'completed',
        ttl: 3_600_000,
      });
      const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      expect(result.structuredContent).toMatchObject({ status: 'success', outputs: ['kept'] });
      expect((await client.experimental.tasks.listTasks()).tasks.map((task) => task.taskId)).toContain(
        taskId,
      );
    } finally {
      await client.close();
    }
  });
});
