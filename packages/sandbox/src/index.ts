// Public API of @mci/sandbox: run model-written TypeScript in isolated-vm worker processes.

export type { FetchRequestData, FetchResponseData } from './bootstrap/fetch.ts';
export type { AllowNetEntry, EgressAllow } from './egress.ts';
// Egress policy of the sandbox's fetch
export { EgressDenied, isInternalAddress, parseAllowNet } from './egress.ts';
// Executions
export type {
  Execution,
  ExecutionError,
  ExecutionRequest,
  ExecutionResult,
  ExecutionStatus,
  FetchGate,
  FetchSendOptions,
  SandboxEvent,
  SandboxLanguage,
} from './execution.ts';
export type { SandboxLimits } from './limits.ts';
// Limits
export { DEFAULT_LIMITS, resolveLimits } from './limits.ts';
export type { Isolation, SandboxPool, SandboxPoolOptions } from './pool.ts';
// The pool
export {
  createSandboxPool,
  DEFAULT_MAX_EXECUTIONS_PER_WORKER,
  DEFAULT_MAX_RUNS_PER_ISOLATE,
  DEFAULT_MAX_WORKER_RSS_MB,
} from './pool.ts';
// Pictures and files a program makes (output.image, output.file)
export type { RunFile } from './run-file.ts';
export { fileNameProblem, isMimeType, MAX_FILE_NAME_LENGTH } from './run-file.ts';
export type { SandboxErrorCode } from './sandbox-error.ts';

// Errors
export { SandboxError } from './sandbox-error.ts';
// Saved skills (`skills.<name>(input)`, `skills.save`)
export type { SkillHost, SkillOp } from './skill-host.ts';
// Durable state (`state.get`, `state.set`, `state.delete`, `state.keys`)
export type { StateHost, StateOp, StateSetOptions } from './state-host.ts';
export { MAX_STATE_KEY_LENGTH, MAX_STATE_TTL_MS, stateKeyProblem } from './state-host.ts';
// Tools as the sandbox sees them
export type { ToolHost, ToolResult } from './tool-host.ts';
export type { ToolCatalog, ToolDescription, ToolMatch } from './tool-catalog.ts';
// Finding tools (`tools.search`, `tools.describe`)
export {
  DEFAULT_SEARCH_LIMIT,
  MAX_SEARCH_LIMIT,
  MAX_SEARCH_QUERY_LENGTH,
  searchArguments,
  unknownToolMessage,
} from './tool-catalog.ts';
