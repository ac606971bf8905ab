import { relative } from 'node:path';
import {
  formatSchemaIssue,
  loadToolFile,
  parseToolFilterArgument,
  SchemaError,
  type ToolCollection,
  type ToolFilter,
} from '@mci/schema';
import { InvalidArgumentError, Option } from 'commander';
import type { Env } from '../config/read-setting.ts';
import type { CliIo } from './io.ts';

/** Commander collector for repeatable `--filter kind:a,b` options. */
export function collectFilterOption(value: string, previous: ToolFilter[] = []): ToolFilter[] {
  try {
    return [...previous, parseToolFilterArgument(value)];
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

/** `--filter <kind:values>`, repeatable: the tool filters a command applies, combined with AND. */
export function toolFilterOption(): Option {
  return new Option(
    '--filter <kind:values>',
    'only:a,b | except:a | tags:x,y | withoutTags:x | toolsets:s (repeatable, combined with AND)',
  ).argParser(collectFilterOption);
}

/** `--mcp`: load the tools of the tool file's MCP servers too (see {@link loadCollection}). */
export function mcpToolsOption(): Option {
  return new Option(
    '--mcp',
    "also load MCP servers' tools (from the cache in libraryDir/mcp/, else by connecting)",
  );
}

/** A path as the user should read it: relative to `cwd` when inside it. */
export function displayPath(file: string, cwd: string): string {
  const inside = relative(cwd, file);
  return inside === '' || inside.startsWith('..') ? file : inside;
}

/**
 * Loads the tool file for a command, its templates seeing `env` with `extra` (`-e KEY=VAL`) over it.
 * With `mcp`, MCP servers' tools are loaded too (from the cache in `{libraryDir}/mcp/`, else by
 * connecting), through `@mci/tools`, imported only then; without it they are skipped.
 * @throws {SchemaError} as `loadToolFile`.
 */
export async function loadCollection(
  file: string,
  options: { env: Env; extra?: Record<string, string> | undefined; mcp?: boolean | undefined },
): Promise<ToolCollection> {
  const env = { ...options.env, ...options.extra };
  if (!options.mcp) return loadToolFile(file, { env });
  const { loadTools } = await import('@mci/tools');
  return loadTools(file, { env });
}

/**
 * {@link loadCollection} for a command: the collection, or `undefined` once the lines of
 * {@link describeLoadError} went to `io.stderr` (the command picks its exit code).
 */
export async function loadCollectionOrSay(
  file: string,
  options: { extra?: Record<string, string> | undefined; mcp?: boolean | undefined },
  io: Pick<CliIo, 'env' | 'cwd' | 'stderr'>,
): Promise<ToolCollection | undefined> {
  try {
    return await loadCollection(file, { env: io.env, ...options });
  } catch (error) {
    for (const line of describeLoadError(error, io.cwd)) io.stderr.write(`${line}\n`);
    return undefined;
  }
}

/** Lines describing a load failure: every issue as `file:line:column path: message`, paths shortened. */
export function describeLoadError(error: unknown, cwd: string): string[] {
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
