import type { CheckDeclarations } from '@mci/check';
import { renderSandboxGlobals, type ToolDeclarationSource } from '../tools-dts/sandbox-globals-dts.ts';
import { SANDBOX_WEB_APIS_DTS } from './sandbox-web-apis-dts.ts';

/**
 * What the check reads for a server's tools: the declarations of `/tools.d.ts` with the sandbox's
 * web APIs, and for each tool whether it forbids extra input properties (`additionalProperties: false`
 * at the top of its input schema, MCI schema) and which input properties it requires.
 */
export function checkDeclarations(tools: readonly ToolDeclarationSource[]): CheckDeclarations {
  return {
    dts: `${renderSandboxGlobals(tools)}\n${SANDBOX_WEB_APIS_DTS}`,
    tools: tools.map((tool) => {
      const schema =
        typeof tool.inputSchema === 'object' && tool.inputSchema !== null ? tool.inputSchema : {};
      const required = Array.isArray(schema.required)
        ? schema.required.filter((p) => typeof p === 'string')
        : [];
      return { name: tool.name, closed: schema.additionalProperties === false, required };
    }),
  };
}
