import { fileURLToPath } from 'node:url';
import { createToolRunner, loadTools, type ToolRunner } from '@mci/tools';
import type { ExecutionRequest, ExecutionResult, SandboxEvent, SandboxPool } from '../src/index.ts';

/** The fixture tool file: text tools, a slow cli tool (kills), a failing one. */
export const TOOL_FILE = fileURLToPath(new URL('./fixtures/tools.mci.json', import.meta.url));

/** A real tool runner over the fixture tool file. */
export async function fixtureTools(): Promise<ToolRunner> {
  return createToolRunner(await loadTools(TOOL_FILE));
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
