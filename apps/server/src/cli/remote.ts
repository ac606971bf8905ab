import { ClientError, connect, type MciClient } from '@mci/client';
import { type Command, InvalidArgumentError, Option } from 'commander';

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
  url: string;
  token?: string;
}

const DEFAULT_URL = 'http://127.0.0.1:7687';

/** A usage problem (bad argument, unreadable file): printed as is, exit code 2. */
export class UsageError extends Error {}

/** Adds `--url` and `--token` (from `MCI_URL`, `MCI_TOKEN` or `MCI_API_KEY` when not given). */
export function addRemoteOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--url <url>', 'server URL (http://, ws://, or host:port)')
        .env('MCI_URL')
        .default(DEFAULT_URL),
    )
    .addOption(new Option('--token <token>', 'API token (env MCI_TOKEN, else MCI_API_KEY)'))
    .exitOverride((error) => {
      // Commander's own usage errors exit 1, which here means "failed": make them 2.
      process.exit(error.exitCode === 0 ? EXIT.OK : EXIT.USAGE);
    });
}

/**
 * Connects with the command's `--url`/`--token`, runs `body`, closes, and sets the exit code:
 * what `body` returns, 2 for a {@link UsageError}, 1 for anything else (printed as `mci NAME: message`).
 */
export async function runRemote(
  name: string,
  options: RemoteOptions,
  body: (client: MciClient) => Promise<number>,
): Promise<void> {
  let client: MciClient | undefined;
  try {
    // An empty variable counts as unset.
    const token = options.token || process.env.MCI_TOKEN || process.env.MCI_API_KEY;
    client = await connect(options.url, {
      ...(token ? { token } : {}),
      reconnect: { maxAttempts: 5 },
    });
    process.exitCode = await body(client);
  } catch (error) {
    process.stderr.write(`mci ${name}: ${describe(error)}\n`);
    process.exitCode = error instanceof UsageError ? EXIT.USAGE : EXIT.FAILED;
  } finally {
    await client?.close();
  }
}

/** One line for an error: the server's message, with the bad field and code when known. */
export function describe(error: unknown): string {
  if (error instanceof ClientError) {
    const where = error.path ? ` (${error.path})` : '';
    if (error.code === 'UNAUTHORIZED') return `${error.message}; pass --token or set MCI_TOKEN`;
    return `${error.message}${where} [${error.code}]`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** Parses PID arguments. @throws UsageError naming the bad one */
export function parsePids(values: string[]): number[] {
  return values.map((value) => {
    const pid = Number(value);
    if (!Number.isSafeInteger(pid) || pid < 1) throw new UsageError(`not a pid: ${JSON.stringify(value)}`);
    return pid;
  });
}

/** A commander argument parser for a positive integer option (`--run`, `--timeout`). */
export function positiveInteger(name: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n < 1)
      throw new InvalidArgumentError(`${name} must be a positive integer`);
    return n;
  };
}
