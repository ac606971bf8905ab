import { isAbsolute, relative, resolve } from 'node:path';
import { parseToolsetFileDocument } from './parse-tool-file.ts';
import { readToolFile } from './read-tool-file.ts';
import { SchemaError, type SchemaIssue } from './schema-error.ts';
import type { Candidate, IssueAt } from './tool-candidate.ts';
import { matchesToolFilter, schemaFilterToToolFilter } from './tool-filter.ts';
import { locateToolset } from './toolset-locator.ts';
import type { ToolsetRef } from './toolset-schema.ts';

/**
 * Loads the toolset `ref` (entry `index` of the main file's `toolsets`) from `libraryDir` and applies
 * its filter. Problems are returned, not thrown, so a load reports every toolset's issues at once.
 */
export async function loadToolset(
  ref: ToolsetRef,
  index: number,
  libraryDir: string,
  issueAt: IssueAt,
): Promise<{ issues: SchemaIssue[]; candidates: Candidate[] }> {
  const issues: SchemaIssue[] = [];
  const candidates: Candidate[] = [];
  const refPath = ['toolsets', index];
  const inside = relative(libraryDir, resolve(libraryDir, ref.name));
  if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) {
    const message = `toolset name "${ref.name}" must name a file or directory inside libraryDir (${libraryDir})`;
    return { issues: [issueAt('INVALID_TOOL_FILE', [...refPath, 'name'], message)], candidates };
  }
  const location = await locateToolset(libraryDir, ref.name);
  if (!location.found) {
    return { issues: [issueAt('TOOLSET_NOT_FOUND', [...refPath, 'name'], location.reason)], candidates };
  }
  for (const toolsetFile of location.files) {
    try {
      const { data, source } = parseToolsetFileDocument(
        await readToolFile(toolsetFile, toolsetFile),
        toolsetFile,
      );
      data.tools.forEach((tool, toolIndex) => {
        candidates.push({
          tool: { ...tool, toolset: ref.name, source: toolsetFile },
          file: toolsetFile,
          path: ['tools', toolIndex],
          source,
        });
      });
    } catch (error) {
      if (!(error instanceof SchemaError)) throw error;
      issues.push(...error.issues);
    }
  }
  if (!ref.filter) return { issues, candidates };

  const filter = schemaFilterToToolFilter(ref.filter, ref.filterValue ?? '');
  const names = filter.only ?? filter.except;
  if (names && issues.length === 0) {
    // A misspelt name would silently drop (or keep) a tool: say so instead.
    const known = new Set(candidates.map((candidate) => candidate.tool.name));
    const unknown = names.filter((name) => !known.has(name));
    if (unknown.length > 0) {
      const message = `${ref.filter} names ${unknown.map((name) => `"${name}"`).join(', ')}, not defined in toolset "${ref.name}" (it defines ${[...known].join(', ') || 'no tools'})`;
      issues.push(issueAt('INVALID_TOOL_FILE', [...refPath, 'filterValue'], message));
    }
  }
  return { issues, candidates: candidates.filter((candidate) => matchesToolFilter(candidate.tool, filter)) };
}
