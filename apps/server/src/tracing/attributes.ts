import { type Redactor, withoutCredentials } from '@mci/schema';

// Attribute names of the OpenTelemetry semantic conventions that are still incubating, copied here
// as their maintainers advise (the `incubating` entry point may change in a minor version).
// @see https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/#execute-tool-span
export const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
export const ATTR_GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
export const ATTR_GEN_AI_TOOL_TYPE = 'gen_ai.tool.type';
// @see https://opentelemetry.io/docs/specs/semconv/mcp/
export const ATTR_MCP_METHOD_NAME = 'mcp.method.name';
export const ATTR_MCP_SESSION_ID = 'mcp.session.id';

// MCI's own attributes, under `mci.` (docs/operations.md, "Traces").
export const ATTR_PID = 'mci.process.pid';
export const ATTR_RUN = 'mci.run';
export const ATTR_PRINCIPAL = 'mci.principal';
export const ATTR_STREAM = 'mci.stream.id';
export const ATTR_REF = 'mci.process.ref';
export const ATTR_STATUS = 'mci.run.status';
export const ATTR_QUEUE_WAIT_MS = 'mci.run.queue_wait_ms';
export const ATTR_TOOL_TYPE = 'mci.tool.type';
export const ATTR_POLICY_DECISION = 'mci.policy.decision';
export const ATTR_ERROR_CODE = 'mci.error.code';

/**
 * `url` as a span may carry it (`url.full`): without a password or credential query values
 * (`withoutCredentials`), then with every secret value of the server replaced (`[redacted:NAME]`).
 */
export function urlAttribute(url: URL, redactor: Redactor | undefined): string {
  // Without a password or a query there is nothing for `withoutCredentials` to take out.
  const safe = url.password === '' && url.search === '' ? url.href : withoutCredentials(url.href);
  return redactor ? redactor.redact(safe) : safe;
}
