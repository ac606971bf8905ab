import { homedir } from 'node:os';
import { join } from 'node:path';
import { type Env, readEnv, readEnvNumber } from '../config/read-setting.ts';
import type { ServerOptions } from '../server.ts';

/** The storage flags of `mci serve`, as the command line gives them. */
export interface StorageFlags {
  db?: string;
  retentionDays?: number;
  retentionMax?: number;
}

const DAY_MS = 86_400_000;

/**
 * Where `mci serve` keeps its processes when neither `--db` nor `MCI_DB` says: one file per user,
 * `$XDG_DATA_HOME/mci/mci.db` (else `~/.local/share/mci/mci.db`), the same whichever directory the
 * server starts in.
 * @see https://specifications.freedesktop.org/basedir-spec/latest/
 */
export function defaultDbPath(env: Env): string {
  const dataHome =
    readEnv(env, 'XDG_DATA_HOME') ?? join(readEnv(env, 'HOME') ?? homedir(), '.local', 'share');
  return join(dataHome, 'mci', 'mci.db');
}

/**
 * The {@link ServerOptions} of the storage settings: flags first, then `MCI_DB`,
 * `MCI_RETENTION_DAYS` (a positive number), `MCI_RETENTION_MAX` (a positive integer).
 * @throws ConfigError for a malformed variable
 */
export function storageSettings(
  flags: StorageFlags,
  env: Env,
): Required<Pick<ServerOptions, 'db' | 'retention'>> {
  const days =
    flags.retentionDays ??
    readEnvNumber(env, 'MCI_RETENTION_DAYS', { integer: false, positive: true, min: 0 });
  const max = flags.retentionMax ?? readEnvNumber(env, 'MCI_RETENTION_MAX');
  return {
    db: flags.db ?? readEnv(env, 'MCI_DB') ?? defaultDbPath(env),
    retention: {
      ...(days !== undefined && { maxAgeMs: days * DAY_MS }),
      ...(max !== undefined && { maxProcesses: max }),
    },
  };
}
