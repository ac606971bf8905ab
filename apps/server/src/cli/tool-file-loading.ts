import { relative } from 'node:path';
import {
  formatSchemaIssue,
  loadToolFile,
  parseToolFilterArgument,
  SchemaError,
  type ToolCollection,
  type ToolFilter,
} from '@mci/schema';
import { loadTools } from '@mci/tools';
import { InvalidArgumentError } from 'commander';

/** Commander collector for repeatable `-e KEY=VAL` options. */
export function collectEnvOption(
  value: string,
  previous: Record<string, string> = {},
): Record<string, string> {
  const equals = value.indexOf('=');
  if (equals <= 0) throw new InvalidArgumentError(`expected KEY=VALUE, got "${value}"`);
  return { ...previous, [value.slice(0, equals)]: value.slice(equals + 1) };
}

/** Commander collector for repeatable `--filter kind:a,b` options. */
export function collectFilterOption(value: string, previous: ToolFilter[] = []): ToolFilter[] {
  try {
    return [...previous, parseToolFilterArgument(value)];
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

/** A path as the user should read it: relative to `cwd` when inside it. */
export function displayPath(file: string, cwd = process.cwd()): string {
  const inside = relative(cwd, file);
  return inside === '' || inside.startsWith('..') ? file : inside;
}

/**
 * Loads the tool file for a command. With `mcp`, MCP servers' tools are loaded too (from the cache in
 * `{libraryDir}/mcp/`, else by connecting); without it they are skipped.
 * @throws {SchemaError} as `loadToolFile`.
 */
export function loadCollection(
  file: string,
  options: { env?: Record<string, string> | undefined; mcp?: boolean | undefined },
): Promise<ToolCollection> {
  const env = { ...process.env, ...options.env };
  return options.mcp ? loadTools(file, { env }) : loadToolFile(file, { env });
}

/** Lines describing a load failure: every issue as `file:line:column path: message`, paths shortened. */
export function describeLoadError(error: unknown, cwd = process.cwd()): string[] {
  if (!(error instanceof SchemaError))
    return [`error: ${error instanceof Error ? error.message : String(error)}`];
  const noun = error.issues.length === 1 ? 'problem' : 'problems';
  return [
    `error: ${error.issues.length} ${noun} (${error.code})`,
    ...error.issues.map(
      (issue) => `  ${formatSchemaIssue({ ...issue, file: displayPath(issue.file, cwd) })}`,
    ),
  ];
}
