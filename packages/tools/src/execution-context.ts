import type { ResolvedTool, TemplateContext } from '@mci/schema';
import type { PathPolicy } from './path-policy.ts';

/** What an executor gets for one execution. Nothing in it may be mutated. */
export interface ExecutionContext {
  tool: ResolvedTool;
  /** Validated props with schema defaults applied. */
  props: Record<string, unknown>;
  /** The template context: `{props, env, input}` (`input` is `props`). */
  template: TemplateContext;
  /** The runner's environment: the process environment merged with explicit values. */
  env: Record<string, string | undefined>;
  /** Where file paths and cli working directories may point. */
  paths: PathPolicy;
  /** Aborts the execution (the caller's signal combined with the runner's). */
  signal: AbortSignal | undefined;
  /**
   * The caller's own signal, without the runner's. MCP calls hand only this one to the SDK: the
   * runner's abort closes the MCP connections, which ends their calls at once.
   */
  callerSignal: AbortSignal | undefined;
  /** Bytes of stdout and stderr a cli tool keeps each; the largest http body or file accepted. */
  maxOutputBytes: number;
}

/**
 * Renders one field, prefixing a failure with the field's name (`execution.url: line 1: ...`) so
 * the message says where the bad template is.
 */
export function renderField<T>(field: string, render: () => T): T {
  try {
    return render();
  } catch (error) {
    if (error instanceof Error) error.message = `${field}: ${error.message}`;
    throw error;
  }
}
