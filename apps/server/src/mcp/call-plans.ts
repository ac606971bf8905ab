import { type CheckMode, CheckModeSchema } from '@mci/protocol';
import type { ResolvedTool } from '@mci/schema';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CreateProcessInput } from '../processes/process-manager-types.ts';

/**
 * What a `tools/call` does: run a program (`run_code`), call one tool or one saved skill (each a
 * process of its own), or answer at once (`search_tools`, `describe_tool`).
 */
export type CallPlan =
  | { kind: 'run_code'; code: string; timeoutMs?: number; ref?: string; check?: CheckMode }
  | { kind: 'tool'; tool: ResolvedTool; args: Record<string, unknown> }
  | { kind: 'skill'; skill: string; args: Record<string, unknown> }
  | { kind: 'answer'; result: CallToolResult };

/**
 * The process a plan that runs creates. `run_code` programs run in the MCP session's `session` (so
 * they share its `state`) and are checked; a tool or a skill validates its own input, so their
 * generated programs are not.
 */
export function processInputOf(
  call: Exclude<CallPlan, { kind: 'answer' }>,
  common: { ref: string; metadata: NonNullable<CreateProcessInput['metadata']>; session: string },
): CreateProcessInput {
  const { ref, metadata, session } = common;
  if (call.kind === 'run_code')
    return {
      code: call.code,
      ref,
      ...(call.timeoutMs !== undefined && { timeoutMs: call.timeoutMs }),
      ...(call.check !== undefined && { check: call.check }),
      metadata,
      session,
    };
  const code =
    call.kind === 'skill'
      ? `return await skills.${call.skill}(${JSON.stringify(call.args)});`
      : directCallCode(call.tool.name, call.args);
  return { code, lang: 'js', ref, check: 'off', metadata };
}

/** Validates `run_code`'s arguments (a protocol error names the bad one). */
export function runCodePlan(args: Record<string, unknown>): CallPlan {
  const { code, timeoutMs, ref, check } = args;
  if (typeof code !== 'string' || code.length === 0)
    throw new McpError(ErrorCode.InvalidParams, 'run_code: code must be a non-empty string');
  if (timeoutMs !== undefined && (!Number.isSafeInteger(timeoutMs) || (timeoutMs as number) <= 0))
    throw new McpError(ErrorCode.InvalidParams, 'run_code: timeoutMs must be a positive integer');
  if (ref !== undefined && typeof ref !== 'string')
    throw new McpError(ErrorCode.InvalidParams, 'run_code: ref must be a string');
  const mode = CheckModeSchema.safeParse(check);
  if (check !== undefined && !mode.success)
    throw new McpError(ErrorCode.InvalidParams, 'run_code: check must be block, warn or off');
  for (const key of Object.keys(args)) {
    if (key !== 'code' && key !== 'timeoutMs' && key !== 'ref' && key !== 'check')
      throw new McpError(ErrorCode.InvalidParams, `run_code: unknown argument "${key}"`);
  }
  return {
    kind: 'run_code',
    code,
    ...(timeoutMs !== undefined && { timeoutMs: timeoutMs as number }),
    ...(ref !== undefined && { ref }),
    ...(mode.success && { check: mode.data }),
  };
}

/**
 * The program of a direct tool call: one `output()` of the tool's result. Names and arguments are
 * embedded as JSON, which is a JavaScript expression.
 */
function directCallCode(name: string, args: Record<string, unknown>): string {
  return `output(await tools[${JSON.stringify(name)}](${JSON.stringify(args)}))`;
}
