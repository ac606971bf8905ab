import { type Env, readEnv, readEnvBoolean, readEnvNumber } from '../config/read-setting.ts';
import type { ServerOptions } from '../server.ts';
import { defaultDbPath } from './sql/sqlite-file.ts';

/** The storage flags of `mci serve`, as the command line gives them. */
export interface StorageFlags {
  db?: string;
  node?: string;
  cluster?: boolean;
  nodeLeaseMs?: number;
  retentionDays?: number;
  retentionMax?: number;
  retentionMaxBytes?: number;
}

const DAY_MS = 86_400_000;

/**
 * The {@link ServerOptions} of the storage settings: flags first, then `MCI_DB`, `MCI_NODE`,
 * `MCI_CLUSTER` (true/false), `MCI_NODE_LEASE_MS` (a positive integer), `MCI_RETENTION_DAYS` (a positive number), `MCI_RETENTION_MAX` and `MCI_RETENTION_MAX_BYTES` (positive integers).
 * @throws ConfigError for a malformed variable
 */
export function storageSettings(
  flags: StorageFlags,
  env: Env,
): Required<Pick<ServerOptions, 'db' | 'retention'>> &
  Pick<ServerOptions, 'node' | 'cluster' | 'nodeLeaseMs'> {
  const days =
    flags.retentionDays ??
    readEnvNumber(env, 'MCI_RETENTION_DAYS', { integer: false, positive: true, min: 0 });
  const max = flags.retentionMax ?? readEnvNumber(env, 'MCI_RETENTION_MAX');
  const maxBytes = flags.retentionMaxBytes ?? readEnvNumber(env, 'MCI_RETENTION_MAX_BYTES');
  const node = flags.node ?? readEnv(env, 'MCI_NODE');
  const cluster = flags.cluster ?? readEnvBoolean(env, 'MCI_CLUSTER');
  const nodeLeaseMs = flags.nodeLeaseMs ?? readEnvNumber(env, 'MCI_NODE_LEASE_MS', { min: 100 });
  return {
    ...(node !== undefined && { node }),
    ...(cluster !== undefined && { cluster }),
    ...(nodeLeaseMs !== undefined && { nodeLeaseMs }),
    db: flags.db ?? readEnv(env, 'MCI_DB') ?? readEnv(env, 'MCI_DB_URL') ?? defaultDbPath(env),
    retention: {
      ...(days !== undefined && { maxAgeMs: days * DAY_MS }),
      ...(max !== undefined && { maxProcesses: max }),
      ...(maxBytes !== undefined && { maxBytes }),
    },
  };
}
