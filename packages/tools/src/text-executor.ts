import { renderTemplate, type TextExecution } from '@mci/schema';
import { type ExecutionContext, renderField } from './execution-context.ts';
import { type ToolResult, textResult } from './tool-result.ts';

/** Renders `text` with the full engine; the result is one text item. */
export async function executeText(execution: TextExecution, ctx: ExecutionContext): Promise<ToolResult> {
  return textResult(renderField('execution.text', () => renderTemplate(execution.text, ctx.template)));
}
