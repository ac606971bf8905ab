// Public API of @mci/sandbox: run model-written TypeScript in isolated-vm worker processes.

// The pool
export { createSandboxPool, DEFAULT_MAX_EXECUTIONS_PER_WORKER, DEFAULT_MAX_WORKER_RSS_MB } from './pool.ts';
export type { SandboxPool, SandboxPoolOptions } from './pool.ts';

// Executions
export type {
  Execution,
  ExecutionError,
  ExecutionRequest,
  ExecutionResult,
  ExecutionStatus,
  FetchGate,
  SandboxEvent,
  SandboxLanguage,
} from './execution.ts';

// Limits
export { DEFAULT_LIMITS, resolveLimits } from './limits.ts';
export type { SandboxLimits } from './limits.ts';

// Tools as the sandbox sees them
export type { ToolHost, ToolResult } from './tool-host.ts';

// Egress policy of the sandbox's fetch
export { isInternalAddress, parseAllowNet } from './egress.ts';
export type { AllowNetEntry } from './egress.ts';
export type { FetchRequestData, FetchResponseData } from './bootstrap/fetch.ts';

// Errors
export { SandboxError } from './sandbox-error.ts';
export type { SandboxErrorCode } from './sandbox-error.ts';
