import { type CliExecution, renderStructured, renderTemplate } from '@mci/schema';
import { type ExecutionContext, renderField } from '../execution-context.ts';
import { checkPath } from '../path-policy.ts';
import type { ToolResult } from '../tool-result.ts';
import { argumentText, flagArguments } from './cli-argv.ts';
import { runCommand } from './run-command.ts';

/**
 * Runs a cli tool: argv is the templated command, the templated args (`{!!path!!}` values become
 * text), then the flags; no shell. The templated `cwd` (default: the tool file's directory) is
 * path-checked.
 */
export async function executeCli(execution: CliExecution, ctx: ExecutionContext): Promise<ToolResult> {
  const command = renderField('execution.command', () => renderTemplate(execution.command, ctx.template));
  const args = renderField('execution.args', () =>
    renderStructured(execution.args ?? [], ctx.template),
  ) as unknown[];
  const cwdTemplate = execution.cwd;
  const cwd =
    cwdTemplate === undefined
      ? ctx.paths.baseDir
      : await checkPath(
          renderField('execution.cwd', () => renderTemplate(cwdTemplate, ctx.template)),
          ctx.paths,
        );
  return runCommand(
    {
      command,
      args: [...args.map(argumentText), ...flagArguments(execution.flags, ctx.template)],
      cwd,
      timeoutMs: execution.timeout_ms,
      maxOutputBytes: ctx.maxOutputBytes,
      env: ctx.env,
    },
    ctx.signal,
  );
}
