import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createToolRunner, loadTools, type ToolRunner } from '@mci/tools';
import { afterAll } from 'vitest';
import {
  createSandboxPool,
  type ExecutionRequest,
  type ExecutionResult,
  type SandboxEvent,
  type SandboxPool,
  type SandboxPoolOptions,
} from '../src/index.ts';

const execFileAsync = promisify(execFile);

/** The fixture tool file: text tools, a slow cli tool (kills), a failing one. */
export const TOOL_FILE = fileURLToPath(new URL('./fixtures/tools.mci.json', import.meta.url));

/** A real tool runner over the fixture tool file. */
export async function fixtureTools(): Promise<ToolRunner> {
  return createToolRunner(await loadTools(TOOL_FILE));
}

/** A pool for the tests of one file, closed after them. */
export function filePool(options?: SandboxPoolOptions): SandboxPool {
  const pool = createSandboxPool(options);
  afterAll(() => pool.close());
  return pool;
}

/** Runs `code` and returns the result with the events it streamed. */
export async function run(
  pool: SandboxPool,
  code: string,
  request: Omit<ExecutionRequest, 'code' | 'onEvent'> = {},
): Promise<ExecutionResult & { events: SandboxEvent[] }> {
  const events: SandboxEvent[] = [];
  const result = await pool.execute({ ...request, code, onEvent: (e) => events.push(e) }).result;
  return { ...result, events };
}

/** Resolves when `predicate` holds, polling every 10 ms (for state outside our control: processes). */
export async function eventually(
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Whether a process is alive and not a zombie (a dead host's children are reaped by init soon after). */
function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * Runs a host fixture that prints its workers' pids (a JSON array, last line) and then exits, waits
 * up to `waitMs` for those workers to end, SIGKILLs any left, and returns both lists.
 */
export async function workersAfterHostExit(
  fixture: string,
  waitMs: number,
): Promise<{ pids: number[]; survivors: number[] }> {
  const { stdout } = await execFileAsync(process.execPath, ['--conditions=@mci/source', fixture], {
    timeout: 30_000,
  });
  const pids = JSON.parse(stdout.trim().split('\n').at(-1)!) as number[];
  const deadline = Date.now() + waitMs;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const survivors = pids.filter(alive);
  for (const pid of survivors) process.kill(pid, 'SIGKILL');
  return { pids, survivors };
}
