import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import type { CommandEntry, CommandModule } from './command.ts';
import { commands } from './commands/index.ts';
import type { CliIo } from './io.ts';

/** Exit code of every usage error: an unknown command, option or choice, a bad value, a missing argument. */
const EXIT_USAGE = 2;
/** Exit code of an error a command did not handle. */
const EXIT_FAILED = 1;

/** The version of the server package (`apps/server/package.json`, beside `src/` and `dist/`). */
function serverVersion(): string {
  const url = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version;
}

/**
 * Runs `mci ARGS` (without `node` and the script) against `io` and resolves with the exit code; never
 * rejects (an error a command does not handle is printed as `mci NAME: message`, exit 1; a usage
 * error commander reports exits 2 in every command). Only the module of the command that runs is
 * imported: `mci --help` and `mci --version` load no command.
 */
export async function runMci(args: readonly string[], io: CliIo): Promise<number> {
  const program = new Command('mci')
    .description('MCI Server: run model-written code in a sandbox, with MCI tools at hand.')
    .version(serverVersion(), '-V, --version', 'print the version of mci')
    .showHelpAfterError()
    .enablePositionalOptions()
    .exitOverride();
  const output = {
    writeOut: (text: string) => void io.stdout.write(text),
    writeErr: (text: string) => void io.stderr.write(text),
  };
  program.configureOutput(output);

  const requested = requestedCommand(args);
  let exitCode = 0;
  for (const entry of commands) {
    const command = program.command(entry.name).description(entry.description);
    if (entry.name !== requested) continue;
    const module = await load(entry);
    command.configureOutput(output).exitOverride();
    module.configure(command);
    command.action(async (...actionArgs: unknown[]) => {
      const self = actionArgs.at(-1) as Command;
      try {
        exitCode = await module.run({ args: self.processedArgs, options: self.opts() }, io);
      } catch (error) {
        // What a command did not turn into its own message: one line, no stack trace.
        io.stderr.write(`mci ${entry.name}: ${error instanceof Error ? error.message : String(error)}\n`);
        exitCode = EXIT_FAILED;
      }
    });
  }
  try {
    await program.parseAsync([...args], { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    // Help and version end with exit code 0; everything else commander refuses is a usage error.
    return error.exitCode === 0 ? 0 : EXIT_USAGE;
  }
  return exitCode;
}

/** The command `args` name: the first word that is not an option (`mci help NAME` names NAME). */
function requestedCommand(args: readonly string[]): string | undefined {
  const [first, second] = args;
  if (first === 'help') return second;
  return first?.startsWith('-') ? undefined : first;
}

async function load(entry: CommandEntry): Promise<CommandModule> {
  return (await entry.load()).default as CommandModule;
}
