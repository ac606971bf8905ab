import { ClientError, connect, type MciClient } from '@mci/client';
import type { Command } from 'commander';
import { type Env, parseNumberSetting, readEnv, readFirstEnv } from '../config/read-setting.ts';
import type { CliIo } from './io.ts';

/** Exit codes of the operator commands (`ps`, `logs`, `kill`, `rerun`, `submit`). */
export const EXIT = {
  /** Done; for `submit --wait` / `rerun --wait`: every process succeeded. */
  OK: 0,
  /** The server refused something, a process did not succeed, or the server could not be reached. */
  FAILED: 1,
  /** Bad arguments or an unreadable input file. */
  USAGE: 2,
} as const;

/** `--url` and `--token` of every command that talks to a running server. */
export interface RemoteOptions {
  url?: string;
  token?: string;
}

const DEFAULT_URL = 'http://127.0.0.1:7687';

/** The server a command talks to: `--url`, else `MCI_URL`, else `http://127.0.0.1:7687`. */
export function serverUrl(options: RemoteOptions, env: Env): string {
  return options.url ?? readEnv(env, 'MCI_URL') ?? DEFAULT_URL;
}

/** A usage problem (bad argument, unreadable file): printed as is, exit code 2. */
export class UsageError extends Error {}

/** Adds `--url` and `--token` (from `MCI_URL`, `MCI_TOKEN` or `MCI_API_KEY` when not given). */
export function addRemoteOptions(command: Command): Command {
  return command
    .option('--url <url>', `server URL: http://, ws://, or host:port (env MCI_URL; default ${DEFAULT_URL})`)
    .option('--token <token>', 'API token (env MCI_TOKEN, else MCI_API_KEY)');
}

/**
 * Connects with `--url`/`--token` (else the environment), runs `body`, closes, and resolves with the
 * exit code: what `body` returns, 2 for a {@link UsageError}, 1 for anything else (printed as
 * `mci NAME: message`).
 */
export async function runRemote(
  name: string,
  options: RemoteOptions,
  io: CliIo,
  body: (client: MciClient) => Promise<number>,
): Promise<number> {
  let client: MciClient | undefined;
  const token = options.token || readFirstEnv(io.env, ['MCI_TOKEN', 'MCI_API_KEY']);
  try {
    client = await connect(serverUrl(options, io.env), {
      ...(token ? { token } : {}),
      reconnect: { maxAttempts: 5 },
    });
    return await body(client);
  } catch (error) {
    io.stderr.write(`mci ${name}: ${describe(error, token !== undefined)}\n`);
    return error instanceof UsageError ? EXIT.USAGE : EXIT.FAILED;
  } finally {
    await client?.close();
  }
}

/**
 * One line for an error: the server's message, with the bad field and code when known. A 401 says
 * whether a token was sent (`sentToken`): the server needs one, or refused the one given.
 */
export function describe(error: unknown, sentToken = true): string {
  if (error instanceof ClientError) {
    if (error.code === 'UNAUTHORIZED') {
      return sentToken
        ? `${error.message}; check --token or MCI_TOKEN`
        : 'the server needs a token: pass --token or set MCI_TOKEN';
    }
    const where = error.path ? ` (${error.path})` : '';
    return `${error.message}${where} [${error.code}]`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** Parses PID arguments. @throws UsageError naming the bad one */
export function parsePids(values: readonly string[]): number[] {
  return values.map((value) => {
    try {
      return parseNumberSetting(value, 'pid');
    } catch {
      throw new UsageError(`not a pid: ${JSON.stringify(value)}`);
    }
  });
}
