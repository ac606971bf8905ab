// Public API of @mci/server (the server itself, for embedding and tests).

export type { Authenticator, AuthResult, TokenGrant } from './auth/authenticator.ts';
export { bearerToken, createAuthenticator } from './auth/authenticator.ts';
export { isLoopbackHost } from './auth/loopback.ts';
export type { ConfigErrorCode } from './config/config-error.ts';
export { ConfigError } from './config/config-error.ts';
export type { Limits, ServerConfigFile, TokenConfig } from './config/config-schema.ts';
export { LimitsSchema, ServerConfigFileSchema, TokenConfigSchema } from './config/config-schema.ts';
export type { ServerFlags, ServerSettings } from './config/load-config.ts';
export { DEFAULT_PORT, loadServerSettings } from './config/load-config.ts';
export type { HttpAppOptions, ToolListing } from './http/app.ts';
export { createHttpApp } from './http/app.ts';
export type { IdleCollection, IdleCollector, IdleCollectorOptions } from './idle-collector.ts';
export { startIdleCollector } from './idle-collector.ts';
export type { Listener, ListenOptions } from './listener.ts';
export { listen } from './listener.ts';
export type { LoggerOptions } from './logger.ts';
export { createLogger } from './logger.ts';
// Traces: the OpenTelemetry SDK, started from the OTEL_* variables
export type { Tracing } from './tracing/start-tracing.ts';
export { startTracing, tracingRequested } from './tracing/start-tracing.ts';
export { Redactor } from '@mci/schema';
export { createProcessManager } from './processes/process-manager.ts';
// Process model types
export type {
  CreateProcessInput,
  EventListener,
  Histogram,
  Principal,
  PrincipalUse,
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
export type { Quota, QuotaOptions } from './processes/quota-policy.ts';
export type { ServerErrorCode } from './processes/server-error.ts';
export { SERVER_ERROR_STATUS, ServerError, toServerError } from './processes/server-error.ts';
// Server types
export type { MciServer, ServerOptions } from './server.ts';
// The server: composition, transports, auth, configuration, logging
export { createServer } from './server.ts';
export type { MemoryStoreOptions } from './store/memory-store.ts';
// Process model: the manager, the in-memory store, errors
export { createMemoryStore } from './store/memory-store.ts';
export type { Retention, RetentionOptions } from './store/retention.ts';
export { startRetention } from './store/retention.ts';
export type { Migration } from './store/sql/migrations.ts';
export { MIGRATIONS, SCHEMA_VERSION } from './store/sql/migrations.ts';
export type { PostgresStoreOptions } from './store/sql/open-postgres.ts';
export { isPostgresUrl, openPostgresStore } from './store/sql/open-postgres.ts';
export type { SqliteStoreOptions } from './store/sql/open-sqlite.ts';
export { openSqliteStore } from './store/sql/open-sqlite.ts';
export type { ExpiryPolicy, NodesView, SqlProcessStore } from './store/sql/sql-store.ts';
export { defaultDbPath } from './store/sql/sqlite-file.ts';
export type { SqlStoreOptions } from './store/sql/store-parts.ts';
export type { StoreErrorCode } from './store/store-error.ts';
export { StoreError } from './store/store-error.ts';
export type { ToolDeclarationSource } from './tools-dts/sandbox-globals-dts.ts';
export { renderSandboxGlobals } from './tools-dts/sandbox-globals-dts.ts';
export type { WsGateway, WsGatewayOptions } from './ws/ws-gateway.ts';
export { createWsGateway } from './ws/ws-gateway.ts';
