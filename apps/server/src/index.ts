// Public API of @mci/server (the server itself, for embedding and tests).

// Process model: the manager, the in-memory store, errors
export { createMemoryStore } from './processes/memory-store.ts';
export { createProcessManager } from './processes/process-manager.ts';
export { SERVER_ERROR_STATUS, ServerError, toServerError } from './processes/server-error.ts';

// Process model types
export type {
  CreateProcessInput,
  EventListener,
  Histogram,
  Principal,
  ProcessFilter,
  ProcessLimits,
  ProcessManager,
  ProcessManagerOptions,
  ProcessStats,
  ReplayFilter,
  StreamHandle,
  StreamResult,
} from './processes/process-manager-types.ts';
export type {
  EventRoute,
  ProcessStore,
  RunUpdate,
  StoredEvent,
  StoredEventFilter,
  StoredProcess,
  StoredProcessFilter,
  StoredRun,
} from './processes/process-store.ts';
export type { MemoryStoreOptions } from './processes/memory-store.ts';
export type { ServerErrorCode } from './processes/server-error.ts';
