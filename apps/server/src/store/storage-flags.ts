import { InvalidArgumentError, Option } from 'commander';
import type { ServerOptions } from '../server.ts';
import { DEFAULT_DB_PATH } from './open-database.ts';
import { DEFAULT_RETENTION_MAX_PROCESSES } from './retention.ts';

/** The storage flags of `mci serve`, as commander parses them. */
export interface StorageFlags {
  db?: string;
  retentionDays?: number;
  retentionMax?: number;
}

const DAY_MS = 86_400_000;

const positive = (name: string, integer: boolean) => (value: string) => {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isSafeInteger(n)))
    throw new InvalidArgumentError(`${name} must be a positive ${integer ? 'integer' : 'number'}`);
  return n;
};

/** `--db`, `--retention-days`, `--retention-max` (each also from the environment), for `addOption`. */
export function storageOptions(): { db: Option; retentionDays: Option; retentionMax: Option } {
  return {
    db: new Option(
      '--db <path>',
      `process database: an SQLite file (':memory:' for a throwaway one) or a postgres:// URL (also MCI_DB_URL)`,
    )
      .env('MCI_DB')
      .default(DEFAULT_DB_PATH),
    retentionDays: new Option(
      '--retention-days <days>',
      'delete idle processes unchanged for this long (default 7)',
    )
      .env('MCI_RETENTION_DAYS')
      .argParser(positive('--retention-days', false)),
    retentionMax: new Option(
      '--retention-max <n>',
      `keep at most this many processes, deleting the oldest idle ones (default ${DEFAULT_RETENTION_MAX_PROCESSES})`,
    )
      .env('MCI_RETENTION_MAX')
      .argParser(positive('--retention-max', true)),
  };
}

/**
 * The {@link ServerOptions} of the storage flags. Without `--db` (or `MCI_DB`), `MCI_DB_URL` names
 * the database (a `postgres://` URL, as container platforms hand it out).
 */
export function storageSettings(
  flags: StorageFlags,
  env: Record<string, string | undefined> = process.env,
): Pick<ServerOptions, 'db' | 'retention'> {
  const db =
    flags.db === undefined || flags.db === DEFAULT_DB_PATH ? (env.MCI_DB_URL ?? DEFAULT_DB_PATH) : flags.db;
  return {
    db,
    retention: {
      ...(flags.retentionDays !== undefined && { maxAgeMs: flags.retentionDays * DAY_MS }),
      ...(flags.retentionMax !== undefined && { maxProcesses: flags.retentionMax }),
    },
  };
}
