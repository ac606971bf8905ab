import { expect } from 'vitest';
import type { ToolResult } from '../../src/index.ts';

/** Checks that `result` is the error result of a canceled execution whose message is `error`. */
export function expectCanceled(result: ToolResult, error = 'Execution canceled'): void {
  expect(result).toMatchObject({ isError: true, error, metadata: { canceled: true } });
}
