import { Redactor } from '@mci/schema';
import { Option } from 'commander';
import { type ChatFlags, chatSettings } from '../../chat/chat-flags.ts';
import { ConfigError } from '../../config/config-error.ts';
import { LOG_LEVELS } from '../../config/config-schema.ts';
import { loadServerSettings, type ServerFlags } from '../../config/load-config.ts';
import { readEnvChoice } from '../../config/read-setting.ts';
import { startIdleCollector } from '../../idle-collector.ts';
import { createLogger, type LogFormat, type Logger } from '../../logger.ts';
import { createServer, type MciServer } from '../../server.ts';
import { type StorageFlags, storageSettings } from '../../store/storage-flags.ts';
import { startTracing, type Tracing } from '../../tracing/start-tracing.ts';
import { defineCommand } from '../command.ts';
import type { CliIo } from '../io.ts';
import {
  allowNetOption,
  collect,
  maxStepsOption,
  numberOption,
  toolFileOption,
  toolPromptBudgetOption,
} from '../options.ts';
import { resolveToolFilePath } from '../tool-file.ts';

interface ServeOptions extends ServerFlags, StorageFlags, ChatFlags {
  logFormat?: LogFormat;
  maxConnections?: number;
  rateLimit?: number;
}

const LOG_FORMATS = ['json', 'pretty'] as const;

/**
 * Signals closer together than this are one request: a Ctrl-C reaches the server once from the
 * terminal and once more from a supervisor that forwards it (`node --watch`, turbo).
 */
const SAME_SIGNAL_MS = 1000;

/**
 * `mci serve`: runs the server until SIGTERM/SIGINT, then shuts down gracefully (running processes
 * get the grace period) and exits 0 (1 when the shutdown failed); a second signal while draining
 * exits 1 at once. Exit 2 for a bad configuration or tool file, 1 for anything else at start.
 * The standard `OTEL_*` variables turn on traces (`startTracing`, docs/operations.md).
 */
export default defineCommand<ServeOptions>({
  configure(command) {
    command
      .addOption(toolFileOption())
      .option('--host <host>', 'address to listen on (env MCI_HOST; default 127.0.0.1)')
      .addOption(
        new Option('-p, --port <port>', 'port, 0 for any free one (env MCI_PORT; default 7687)').argParser(
          numberOption('--port', { min: 0, max: 65535 }),
        ),
      )
      .addOption(
        new Option('--concurrency <n>', 'sandbox workers (env MCI_CONCURRENCY; default CPUs)').argParser(
          numberOption('--concurrency'),
        ),
      )
      .addOption(
        new Option(
          '--isolation <mode>',
          'context: one isolate per principal, a fresh context per run; isolate: a fresh isolate per run (env MCI_ISOLATION; default context)',
        ).choices(['context', 'isolate']),
      )
      .addOption(
        new Option(
          '--check <mode>',
          'check each program before it runs: block (certain errors stop it), warn, or off (env MCI_CHECK; default block)',
        ).choices(['block', 'warn', 'off']),
      )
      .addOption(
        new Option('--max-queue <n>', 'most queued processes (env MCI_MAX_QUEUE; default 1000)').argParser(
          numberOption('--max-queue'),
        ),
      )
      .option('--config <path>', 'server config file, YAML or JSON (env MCI_CONFIG)')
      .addOption(allowNetOption('let sandboxed fetch reach this host (repeatable; env MCI_ALLOW_NET)'))
      .option('--insecure', 'allow a non-loopback host without tokens')
      .option(
        '--cors-origin <origin>',
        "page origin allowed to call the server from a browser: scheme://host[:port], :* for any port, or * without tokens (repeatable; config cors.origins; default without tokens: http://localhost:*, http://127.0.0.1:* and http://[::1]:*; with tokens: only the server's own origin)",
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
        ).argParser(numberOption('--max-connections')),
      )
      .addOption(
        new Option(
          '--rate-limit <n>',
          'HTTP requests per client per second (config limits.rateLimitPerSecond; default 200)',
        ).argParser(numberOption('--rate-limit')),
      )
      .option(
        '--db <path>',
        "process database: an SQLite file (':memory:' for a throwaway one) or a postgres:// URL (env MCI_DB or MCI_DB_URL; default ~/.local/share/mci/mci.db)",
      )
      .option(
        '--node <name>',
        "this server's node name on a postgres:// database, unique among live nodes (env MCI_NODE; default HOSTNAME-PID)",
      )
      .option(
        '--cluster',
        "share the postgres:// database with other mci serve nodes: one event log, signals across nodes, a dead node's processes taken over (env MCI_CLUSTER; see docs/cluster.md)",
      )
      .addOption(
        new Option(
          '--node-lease-ms <ms>',
          "how long a node's lease lasts without renewal; renewed every fifth of it (env MCI_NODE_LEASE_MS; default 10000)",
        ).argParser(numberOption('--node-lease-ms', { min: 100 })),
      )
      .addOption(
        new Option(
          '--retention-days <days>',
          'delete idle processes unchanged for this long (env MCI_RETENTION_DAYS; default 7)',
        ).argParser(numberOption('--retention-days', { integer: false, positive: true, min: 0 })),
      )
      .addOption(
        new Option(
          '--retention-max <n>',
          'keep at most this many processes, deleting the oldest idle ones (env MCI_RETENTION_MAX; default 100000)',
        ).argParser(numberOption('--retention-max')),
      )
      .addOption(
        new Option(
          '--retention-max-bytes <n>',
          'keep at most this many bytes of outputs and logs per principal, deleting its oldest idle processes (env MCI_RETENTION_MAX_BYTES; default 1073741824)',
        ).argParser(numberOption('--retention-max-bytes')),
      )
      .option(
        '-m, --model <provider:model>',
        'host conversations with this model (repeatable; the first is the default; keys from the environment)',
        collect,
      )
      .option(
        '--model-url <url>',
        "the models' endpoint (else OPENAI_BASE_URL / ANTHROPIC_BASE_URL, else the provider's)",
      )
      .option('--system <file>', 'a system prompt file to use instead of the generated one')
      .addOption(maxStepsOption())
      .addOption(toolPromptBudgetOption())
      .addOption(
        new Option(
          '--log-level <level>',
          'level of the log lines (env MCI_LOG_LEVEL, config logLevel; default info)',
        ).choices(LOG_LEVELS),
      )
      .addOption(
        new Option(
          '--log-format <format>',
          'log lines: pretty (default on a terminal) or json (env MCI_LOG_FORMAT)',
        ).choices(LOG_FORMATS),
      );
  },
  async run({ options }, io) {
    let server: MciServer;
    let db: string;
    let tokens: boolean;
    let egressRules: number;
    let logger: Logger;
    let tracing: Tracing | undefined;
    try {
      const settings = loadServerSettings(options, io.env, io.cwd);
      const storage = storageSettings(options, io.env);
      db = storage.db;
      tokens = settings.tokens.length > 0;
      egressRules =
        settings.allowNet.length + settings.policies.filter((rule) => rule.fetch !== undefined).length;
      const format =
        options.logFormat ??
        readEnvChoice(io.env, 'MCI_LOG_FORMAT', LOG_FORMATS) ??
        (io.stdout.isTTY ? 'pretty' : 'json');
      // One redactor for the server and its log lines: the server adds its secrets as it loads them.
      const redactor = new Redactor();
      // Before the server: its spans are recorded only once the SDK is started.
      tracing = await startTracing();
      logger = createLogger({
        redactor,
        level: settings.logLevel,
        format,
        colors: io.stdout.isTTY === true,
        destination: io.stdout,
      });
      server = await createServer({
        host: settings.host,
        port: settings.port,
        file: resolveToolFilePath(settings.file, io.cwd),
        env: io.env,
        ...(settings.concurrency !== undefined && { concurrency: settings.concurrency }),
        isolation: settings.isolation,
        check: settings.check,
        maxQueue: settings.maxQueue,
        ...(settings.maxQueuedPerPrincipal !== undefined && {
          maxQueuedPerPrincipal: settings.maxQueuedPerPrincipal,
        }),
        ...(settings.quotas !== undefined && { quotas: settings.quotas }),
        allowNet: settings.allowNet,
        tokens: settings.tokens,
        insecure: settings.insecure,
        ...(settings.corsOrigins !== undefined && { corsOrigins: settings.corsOrigins }),
        publicUrls: settings.publicUrls,
        ...(settings.consoleUrl !== undefined && { consoleUrl: settings.consoleUrl }),
        limits: {
          ...settings.limits,
          ...(options.maxConnections !== undefined && { maxConnections: options.maxConnections }),
          ...(options.rateLimit !== undefined && { rateLimitPerSecond: options.rateLimit }),
        },
        heartbeatMs: settings.heartbeatMs,
        shutdownGraceMs: settings.shutdownGraceMs,
        policies: settings.policies,
        credentials: settings.credentials,
        secrets: settings.secrets,
        publicEnv: settings.publicEnv,
        redactor,
        ...(settings.approvalTimeoutMs !== undefined && { approvalTimeoutMs: settings.approvalTimeoutMs }),
        logger,
        ...storage,
        chat: await chatSettings(options, io.cwd),
        onLeaseLost: (node) => {
          io.stderr.write(
            `mci serve: node ${node} lost its lease to another node, which took over its processes; exiting\n`,
          );
          io.exit(1);
        },
      });
    } catch (error) {
      io.stderr.write(`mci serve: ${(error as Error).message}\n`);
      return error instanceof ConfigError || isUsageError(error as Error) ? 2 : 1;
    }
    const collector = startIdleCollector({
      onCollect: (collection) => logger.debug(collection, 'idle: heap collected and shrunk'),
    });
    // Listen for signals before printing the banner: whoever reads it may signal at once.
    const stopped = untilStopped(server, io);
    printBanner(server, { db, tokens, egressRules }, io);
    const code = await stopped;
    collector.stop();
    // The spans of the last runs are exported before the process exits.
    await tracing?.shutdown().catch((error: unknown) => logger.warn({ err: error }, 'traces not exported'));
    return code;
  },
});

/** A bad tool file, or a model that cannot be made (bad name, missing key, unreadable transcript). */
const isUsageError = (error: Error) => error.name === 'SchemaError' || error.name === 'ModelError';

/** Resolves with the exit code once a signal has closed the server. */
function untilStopped(server: MciServer, io: CliIo): Promise<number> {
  return new Promise((resolve) => {
    let firstAt: number | undefined;
    const stop = (signal: NodeJS.Signals) => {
      if (firstAt !== undefined) {
        if (Date.now() - firstAt < SAME_SIGNAL_MS) return;
        io.stderr.write(`mci serve: ${signal} again, exiting now\n`);
        io.exit(1);
        return;
      }
      firstAt = Date.now();
      server.close().then(
        () => finish(0),
        (error: unknown) => {
          io.stderr.write(`mci serve: shutdown failed: ${(error as Error).message}\n`);
          finish(1);
        },
      );
    };
    const onInt = () => stop('SIGINT');
    const onTerm = () => stop('SIGTERM');
    const finish = (code: number) => {
      io.signals.off('SIGINT', onInt);
      io.signals.off('SIGTERM', onTerm);
      resolve(code);
    };
    io.signals.on('SIGINT', onInt);
    io.signals.on('SIGTERM', onTerm);
  });
}

/**
 * What a newcomer sees first: where the server and its web console are, where it keeps processes, one
 * command to run code.
 */
function printBanner(
  server: MciServer,
  { db, tokens, egressRules }: { db: string; tokens: boolean; egressRules: number },
  io: CliIo,
): void {
  const auth = tokens ? ` -H "Authorization: Bearer $MCI_API_KEY"` : '';
  const webConsole =
    server.consoleUrl === undefined
      ? 'Web console not built: run pnpm --filter @mci/web build'
      : `Web console: ${server.consoleUrl}`;
  const egress =
    egressRules === 0
      ? 'Sandboxed fetch reaches nothing (no egress rule: add allowNet or fetch policies)'
      : `Sandboxed fetch: ${egressRules} egress rule${egressRules === 1 ? '' : 's'} (allowNet and fetch policies); other hosts are refused`;
  io.stderr.write(
    `\nMCI server listening on ${server.url} (WebSocket ${server.wsUrl})\n` +
      `${webConsole}\n` +
      `Processes are stored in ${db}\n` +
      `${egress}\n` +
      `Run code:\n  curl -s ${server.url}/processes -H 'Content-Type: application/json'${auth} ` +
      `-d '{"code":"output(1 + 1)","block":true}'\n\n`,
  );
}
