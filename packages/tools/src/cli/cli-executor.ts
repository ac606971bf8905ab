import { type CliExecution, renderStructured, renderTemplate } from '@mci/schema';
import { type ExecutionContext, renderField } from '../execution-context.ts';
import { checkPath } from '../path-policy.ts';
import { errorResult, type ToolResult } from '../tool-result.ts';
import { argumentText, flagArguments, optionLikeArgument } from './cli-argv.ts';
import { runCommand } from './run-command.ts';

/**
 * Runs a cli tool without a shell. argv is the templated command, the templated args (`{!!path!!}`
 * values become text), then the flags; with `endOfOptions` it is the command, the flags, `--`, then
 * the args. Without `endOfOptions` or `enableOptionLikeArgs`, a templated positional argument that
 * renders to text starting with `-` is refused (an error result), since the program would read it as
 * an option. The templated `cwd` (default: the tool file's directory) is path-checked.
 *
 * @see https://pubs.opengroup.org/onlinepubs/9799919799/basedefs/V1_chap12.html (Utility Syntax
 *   Guideline 10: `--` ends the options)
 */
export async function executeCli(execution: CliExecution, ctx: ExecutionContext): Promise<ToolResult> {
  const command = renderField('execution.command', () => renderTemplate(execution.command, ctx.template));
  const templates = execution.args ?? [];
  const args = (
    renderField('execution.args', () => renderStructured(templates, ctx.template)) as unknown[]
  ).map(argumentText);
  const flags = flagArguments(execution.flags, ctx.template);
  if (!execution.endOfOptions && !execution.enableOptionLikeArgs) {
    const refused = optionLikeArgument(templates, args);
    if (refused) {
      return errorResult(
        `execution.args[${refused.index}] ("${refused.template}") is ${JSON.stringify(refused.text)}, which starts with "-" and would be read as an option; pass a value that does not start with "-" (the tool file can set endOfOptions or enableOptionLikeArgs to allow it)`,
      );
    }
  }
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
      args: execution.endOfOptions ? [...flags, '--', ...args] : [...args, ...flags],
      cwd,
      timeoutMs: execution.timeout_ms,
      maxOutputBytes: ctx.maxOutputBytes,
      env: ctx.env,
    },
    ctx.signal,
  );
}
