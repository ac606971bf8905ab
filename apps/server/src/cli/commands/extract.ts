import { readFile } from 'node:fs/promises';
import { createIntentStream, extractIntents, type Intent } from '@mci/intent-extractor';
import type { Command } from 'commander';
import type { RegisterCommand } from './index.ts';

/** Exit codes of `mci extract`: intents printed (possibly none), or bad usage / unreadable input. */
const EXIT_OK = 0;
const EXIT_USAGE = 2;

interface ExtractOptions {
  format: string;
}

/**
 * `mci extract [FILE|-] [--format json|text]`: prints the exec intents (```` ```ts exec=true ````
 * blocks) of a markdown file, or of stdin when FILE is `-` or absent. JSON prints the array of
 * `Intent`; text prints each intent's header and code. Stdin goes through the streaming extractor,
 * so in text form each intent is printed as soon as its closing fence arrives. Exit 0; 2 for usage
 * errors and unreadable files.
 */
export const registerExtract: RegisterCommand = (program: Command) => {
  program
    .command('extract')
    .description('Print the exec code blocks (intents) of a markdown file or of stdin')
    .argument('[file]', 'markdown file, or - for stdin', '-')
    .option('--format <format>', 'json or text', 'json')
    .exitOverride((error) => process.exit(error.exitCode === 0 ? EXIT_OK : EXIT_USAGE))
    .action(async (file: string, options: ExtractOptions) => {
      const format = options.format;
      if (format !== 'json' && format !== 'text') {
        console.error(`error: --format must be json or text, got "${format}"`);
        process.exitCode = EXIT_USAGE;
        return;
      }
      let intents: Intent[];
      if (file === '-') {
        intents = await extractFromStdin(
          format === 'text' ? (intent) => process.stdout.write(formatText(intent)) : null,
        );
        if (format === 'text') return;
      } else {
        let markdown: string;
        try {
          markdown = await readFile(file, 'utf8');
        } catch (error) {
          console.error(`error: cannot read ${file}: ${(error as Error).message}`);
          process.exitCode = EXIT_USAGE;
          return;
        }
        intents = extractIntents(markdown);
      }
      process.stdout.write(
        format === 'json' ? `${JSON.stringify(intents, null, 2)}\n` : intents.map(formatText).join(''),
      );
    });
};

/** Streams stdin through the intent extractor, calling `onIntent` as each intent completes. */
async function extractFromStdin(onIntent: ((intent: Intent) => void) | null): Promise<Intent[]> {
  const stream = createIntentStream();
  const intents: Intent[] = [];
  const take = (batch: Intent[]) => {
    for (const intent of batch) {
      intents.push(intent);
      onIntent?.(intent);
    }
  };
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) take(stream.push(chunk as string));
  take(stream.end());
  return intents;
}

/** One intent as readable text: a header line, then the code. */
function formatText(intent: Intent): string {
  const state = intent.closed ? 'closed' : 'UNCLOSED, will not run';
  const info = intent.info ? `  [${intent.info}]` : '';
  const code = intent.code === '' ? '' : `${intent.code.replace(/\r\n?/g, '\n')}\n`;
  return `--- intent ${intent.index}: ${intent.lang || '(no language)'}, lines ${intent.startLine}-${intent.endLine}, ${state}${info}\n${code}`;
}
