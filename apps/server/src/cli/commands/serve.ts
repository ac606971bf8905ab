import { type Command, InvalidArgumentError, Option } from 'commander';
import { type ChatFlags, chatOptions, chatSettings } from '../../chat/chat-flags.ts';
import { ConfigError } from '../../config/config-error.ts';
import { loadServerSettings, type ServerFlags } from '../../config/load-config.ts';
import { createLogger } from '../../logger.ts';
import { createServer, type MciServer } from '../../server.ts';
import { type StorageFlags, storageOptions, storageSettings } from '../../store/storage-flags.ts';
import type { RegisterCommand } from './index.ts';

const integer =
  (name: string, min: number, max = Number.MAX_SAFE_INTEGER) =>
  (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}`);
    return n;
  };
const collect = (value: string, previous: string[] = []) => [...previous, value];

type ServeFlags = ServerFlags & StorageFlags & ChatFlags & { maxConnections?: number; rateLimit?: number };

/** `mci serve`: runs the server until SIGTERM/SIGINT (graceful: running processes get the grace period). */
export const registerServe: RegisterCommand = (program: Command) => {
  const storage = storageOptions();
  const chat = chatOptions();
  program
    .command('serve')
    .description('run MCI Server: WebSocket (/ws) and HTTP API on one port')
    .option('-f, --file <path>', 'MCI tool file (default: mci.json/yaml/yml here, else examples/mci.yaml)')
    .option('--host <host>', 'address to listen on (env MCI_HOST; default 127.0.0.1)')
    .addOption(
      new Option('-p, --port <port>', 'port, 0 for any free one (env MCI_PORT; default 7687)').argParser(
        integer('--port', 0, 65535),
      ),
    )
    .addOption(
      new Option('--concurrency <n>', 'sandbox workers (env MCI_CONCURRENCY; default CPUs)').argParser(
        integer('--concurrency', 1),
      ),
    )
    .addOption(
      new Option('--max-queue <n>', 'most queued processes (env MCI_MAX_QUEUE; default 1000)').argParser(
        integer('--max-queue', 1),
      ),
    )
    .option('--config <path>', 'server config file, YAML or JSON (env MCI_CONFIG)')
    .option(
      '--allow-net <host[:port]>',
      'let sandboxed fetch reach this host (repeatable; env MCI_ALLOW_NET)',
      collect,
    )
    .option('--insecure', 'allow a non-loopback host without tokens')
    .option(
      '--cors-origin <origin>',
      'page origin allowed to call the server from a browser: scheme://host[:port], :* for any port, or * without tokens (repeatable; default without tokens: http://localhost:* and http://127.0.0.1:*)',
      collect,
    )
    .option(
      '--public-url <url>',
      'URL the server is reached at through a proxy; its host is accepted (repeatable)',
      collect,
    )
    .addOption(
      new Option(
        '--max-connections <n>',
        'most open connections (config limits.maxConnections; default 1024)',
      ).argParser(integer('--max-connections', 1)),
    )
    .addOption(
      new Option(
        '--rate-limit <n>',
        'HTTP requests per client per second (config limits.rateLimitPerSecond; default 200)',
      ).argParser(integer('--rate-limit', 1)),
    )
    .addOption(storage.db)
    .addOption(storage.retentionDays)
    .addOption(storage.retentionMax)
    .addOption(chat.model)
    .addOption(chat.modelUrl)
    .addOption(chat.system)
    .addOption(chat.maxSteps)
    .action(async (opts: ServeFlags) => {
      try {
        const settings = loadServerSettings(opts);
        const logger = createLogger({ level: settings.logLevel });
        const server = await createServer({
          host: settings.host,
          port: settings.port,
          ...(settings.file !== undefined && { file: settings.file }),
          ...(settings.concurrency !== undefined && { concurrency: settings.concurrency }),
          maxQueue: settings.maxQueue,
          allowNet: settings.allowNet,
          tokens: settings.tokens,
          insecure: settings.insecure,
          ...(settings.corsOrigins !== undefined && { corsOrigins: settings.corsOrigins }),
          publicUrls: settings.publicUrls,
          limits: {
            ...settings.limits,
            ...(opts.maxConnections !== undefined && { maxConnections: opts.maxConnections }),
            ...(opts.rateLimit !== undefined && { rateLimitPerSecond: opts.rateLimit }),
          },
          heartbeatMs: settings.heartbeatMs,
          shutdownGraceMs: settings.shutdownGraceMs,
          logger,
          ...storageSettings(opts),
          chat: await chatSettings(opts),
        });
        // Handlers first: whoever reads the banner may signal at once.
        installSignalHandlers(server);
        printBanner(server, settings.tokens.length > 0);
      } catch (error) {
        process.stderr.write(`mci serve: ${(error as Error).message}\n`);
        // Bad configuration or tool file: usage error (2); anything else (port in use, ...): 1.
        process.exitCode = error instanceof ConfigError || isUsageError(error as Error) ? 2 : 1;
        return;
      }
    });
};

/** A bad tool file, or a model that cannot be made (bad name, missing key, unreadable transcript). */
const isUsageError = (error: Error) => error.name === 'SchemaError' || error.name === 'ModelError';

/** SIGTERM/SIGINT: graceful close, then exit 0 (1 if it failed); a second signal exits at once. */
function installSignalHandlers(server: MciServer): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      process.stderr.write(`mci serve: ${signal} again, exiting now\n`);
      process.exit(1);
    }
    stopping = true;
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`mci serve: shutdown failed: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

/** What a newcomer sees first: where the server is, and one command to run code on it. */
function printBanner(server: MciServer, tokens: boolean): void {
  const auth = tokens ? ` -H "Authorization: Bearer $MCI_API_KEY"` : '';
  process.stderr.write(
    `\nMCI server listening on ${server.url} (WebSocket ${server.wsUrl})\n` +
      `Run code:\n  curl -s ${server.url}/processes -H 'Content-Type: application/json'${auth} ` +
      `-d '{"code":"output(1 + 1)","block":true}'\n\n`,
  );
}
