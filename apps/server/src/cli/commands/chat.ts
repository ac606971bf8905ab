import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Agent, AgentEvent, TurnResult } from '@mci/agent';
import { connect, type MciClient } from '@mci/client';
import { readEnv, readFirstEnv } from '../../config/read-setting.ts';
import { createChatView } from '../chat-view.ts';
import { defineCommand } from '../command.ts';
import type { CliIo } from '../io.ts';
import { maxStepsOption, toolFileOption, toolPromptBudgetOption } from '../options.ts';
import { addRemoteOptions, describe, EXIT, type RemoteOptions, serverUrl, UsageError } from '../remote.ts';
import { resolveToolFilePath } from '../tool-file.ts';

interface ChatOptions extends RemoteOptions {
  model?: string;
  modelUrl?: string;
  local?: boolean;
  file?: string;
  maxSteps?: number;
  toolPromptBudget?: number;
  system?: string;
  json?: boolean;
}

/** Exit code of a turn canceled with Ctrl-C (128 + SIGINT). */
const CANCELED = 130;

/**
 * `mci chat [PROMPT...]`: a terminal chat with a model whose exec blocks run on a server (`--url`) or
 * on an embedded one (`--local`). With a prompt: one turn, then exit (0 when the turn ended, 1 on an
 * error, 2 on a usage error, 130 when canceled). Without: a REPL; Ctrl-C cancels the running turn
 * (its processes are killed), a second Ctrl-C exits.
 */
export default defineCommand<ChatOptions, [words: string[]]>({
  configure(command) {
    command
      .argument('[prompt...]', 'the message; without it, an interactive chat')
      .option(
        '-m, --model <provider:model>',
        'openai:gpt-4.1-mini, anthropic:claude-sonnet-4-5, ollama:qwen3, replay:FILE (env MCI_MODEL)',
      )
      .option(
        '--model-url <url>',
        "the model's endpoint (else OPENAI_BASE_URL / ANTHROPIC_BASE_URL, else the provider's)",
      )
      .option(
        '--local',
        'run an embedded server on a free port with the tool file instead of connecting to --url',
      )
      .addOption(
        toolFileOption(
          'tool file of the --local server (default: mci.json/yaml/yml here, else examples/mci.yaml)',
        ),
      )
      .addOption(maxStepsOption())
      .addOption(toolPromptBudgetOption())
      .option('--system <file>', 'a system prompt file to use instead of the generated one')
      .option('--json', 'print every event as a JSON line (for scripts)');
    addRemoteOptions(command);
  },
  run({ args: [words], options }, io) {
    return runChat(words.join(' ').trim(), options, io);
  },
});

/** Runs `mci chat` with parsed arguments; resolves with the exit code. */
export async function runChat(prompt: string, options: ChatOptions, io: CliIo): Promise<number> {
  let client: MciClient | undefined;
  let server: { url: string; close(options?: { graceMs?: number }): Promise<void> } | undefined;
  try {
    const model = options.model || readEnv(io.env, 'MCI_MODEL');
    if (!model) throw new UsageError('no model: pass --model provider:model (or set MCI_MODEL)');
    const token = options.token || readFirstEnv(io.env, ['MCI_TOKEN', 'MCI_API_KEY']);
    if (options.local) {
      const { createServer } = await import('../../server.ts');
      server = await createServer({
        port: 0,
        logLevel: 'silent',
        file: resolveToolFilePath(options.file, io.cwd),
      });
    }
    client = await connect(server?.url ?? serverUrl(options, io.env), {
      ...(token && !server && { token }),
      reconnect: { maxAttempts: 5 },
    });
    const { createAgent, formatSystemPromptReport } = await import('@mci/agent');
    const agent = await createAgent({
      client,
      model,
      env: io.env,
      cwd: io.cwd,
      ...(token && !server && { token }),
      ...(options.modelUrl && { baseURL: options.modelUrl }),
      ...(options.system && { system: await readSystem(options.system, io.cwd) }),
      ...(options.maxSteps !== undefined && { maxSteps: options.maxSteps }),
      ...(options.toolPromptBudget !== undefined && { toolPromptBudget: options.toolPromptBudget }),
    });
    if (agent.prompt && !options.json) io.stderr.write(`${formatSystemPromptReport(agent.prompt.report)}\n`);
    return prompt ? await oneShot(agent, prompt, options, io) : await repl(agent, options, io);
  } catch (error) {
    io.stderr.write(`mci chat: ${describe(error)}\n`);
    return isUsage(error) ? EXIT.USAGE : EXIT.FAILED;
  } finally {
    await client?.close();
    await server?.close({ graceMs: 0 });
  }
}

/** One turn; Ctrl-C cancels it (a second one exits at once). */
async function oneShot(agent: Agent, prompt: string, options: ChatOptions, io: CliIo): Promise<number> {
  const controller = new AbortController();
  const onInterrupt = () => {
    if (controller.signal.aborted) io.exit(CANCELED);
    controller.abort(new Error('canceled'));
  };
  io.signals.on('SIGINT', onInterrupt);
  try {
    const turn = await runTurnWithView(agent, prompt, controller.signal, options, io);
    return turn.reason === 'canceled' ? CANCELED : EXIT.OK;
  } finally {
    io.signals.off('SIGINT', onInterrupt);
  }
}

/** The REPL: one turn per line; Ctrl-C cancels the running turn, a second Ctrl-C exits. */
async function repl(agent: Agent, options: ChatOptions, io: CliIo): Promise<number> {
  const rl = createInterface({ input: io.stdin, output: io.stdout, prompt: 'you> ' });
  let turn: AbortController | undefined;
  let interrupted = false;
  rl.on('SIGINT', () => {
    if (turn && !interrupted) {
      interrupted = true;
      turn.abort(new Error('canceled'));
      io.stderr.write('\n(canceled; Ctrl-C again to exit)\n');
      return;
    }
    rl.close();
  });
  // Input may end (a pipe, Ctrl-D) while a turn runs; lines already read are still answered.
  let closed = false;
  rl.once('close', () => {
    closed = true;
  });
  const prompt = () => {
    if (!closed) rl.prompt();
  };
  prompt();
  let failed = false;
  for await (const line of rl) {
    const text = line.trim();
    if (text) {
      interrupted = false;
      turn = new AbortController();
      try {
        await runTurnWithView(agent, text, turn.signal, options, io);
      } catch (error) {
        failed = true;
        io.stderr.write(`mci chat: ${describe(error)}\n`);
      }
      turn = undefined;
    }
    prompt();
  }
  return failed ? EXIT.FAILED : EXIT.OK;
}

async function runTurnWithView(
  agent: Agent,
  text: string,
  signal: AbortSignal,
  options: ChatOptions,
  io: CliIo,
): Promise<TurnResult> {
  const view = createChatView(io, { json: options.json === true });
  const turn = await agent.send(text, { signal, onEvent: (event: AgentEvent) => view.event(event) });
  view.finish(turn.answer);
  if (!options.json && turn.reason !== 'answered')
    io.stderr.write(`(stopped: ${turn.reason} after ${turn.steps} steps)\n`);
  return turn;
}

/** A bad argument, or a model that cannot be made (bad name, missing key, unreadable transcript). */
function isUsage(error: unknown): boolean {
  const code = (error as { code?: string }).code ?? '';
  return (
    error instanceof UsageError ||
    ((error as Error).name === 'ModelError' && ['BAD_MODEL', 'MISSING_KEY', 'TRANSCRIPT'].includes(code))
  );
}

async function readSystem(file: string, cwd: string): Promise<string> {
  const path = isAbsolute(file) ? file : resolve(cwd, file);
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(
      `cannot read the system prompt ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}
