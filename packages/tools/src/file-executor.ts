import { readFile, stat } from 'node:fs/promises';
import { type FileExecution, renderTemplate } from '@mci/schema';
import { type ExecutionContext, renderField } from './execution-context.ts';
import { checkPath } from './path-policy.ts';
import { errorResult, type ToolResult, textResult } from './tool-result.ts';

/**
 * Reads a file as UTF-8: `path` is templated, resolved against the tool file's directory and
 * path-checked; with `enableTemplating` the contents are rendered with the full engine. Files larger
 * than `maxOutputBytes` are refused.
 * Metadata: `path` (absolute), `size_bytes`.
 */
export async function executeFile(execution: FileExecution, ctx: ExecutionContext): Promise<ToolResult> {
  const path = renderField('execution.path', () => renderTemplate(execution.path, ctx.template));
  // Errors name the path as the tool gave it: never where it resolves to on the server.
  if (path.includes('\0')) return errorResult(`Invalid path ${JSON.stringify(path)}: it contains a NUL byte`);
  const absolute = await checkPath(path, ctx.paths);
  let size: number;
  try {
    const info = await stat(absolute);
    if (!info.isFile()) return errorResult(`Not a file: ${path}`);
    size = info.size;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return errorResult(`File not found: ${path}`);
    return errorResult(`Cannot read ${path}: ${code ?? 'the file system refused it'}`);
  }
  if (size > ctx.maxOutputBytes) {
    return errorResult(`File ${path} is larger than the ${ctx.maxOutputBytes}-byte limit (${size} bytes)`);
  }
  let contents: string;
  try {
    contents = await readFile(absolute, { encoding: 'utf8', signal: ctx.signal });
  } catch (error) {
    if (ctx.signal?.aborted) throw error;
    return errorResult(
      `Cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'the file system refused it'}`,
    );
  }
  const text = execution.enableTemplating
    ? renderField(`file ${path}`, () => renderTemplate(contents, ctx.template))
    : contents;
  return textResult(text, { path: absolute, size_bytes: size });
}
