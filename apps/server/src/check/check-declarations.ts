import type { CheckDeclarations } from '@mci/check';
import { renderSandboxGlobals, type ToolDeclarationSource } from '../tools-dts/sandbox-globals-dts.ts';
import { SANDBOX_WEB_APIS_DTS } from './sandbox-web-apis-dts.ts';

/**
 * What the check reads for a server's tools: the declarations of `/tools.d.ts` with the sandbox's
 * web APIs, and which tools forbid extra input properties (`additionalProperties: false` at the top
 * of their input schema, MCI schema).
 */
export function checkDeclarations(tools: readonly ToolDeclarationSource[]): CheckDeclarations {
  return {
    dts: `${renderSandboxGlobals(tools)}\n${SANDBOX_WEB_APIS_DTS}`,
    tools: tools.map((tool) => ({
      name: tool.name,
      closed:
        typeof tool.inputSchema === 'object' && tool.inputSchema !== null
          ? tool.inputSchema.additionalProperties === false
          : false,
    })),
  };
}
