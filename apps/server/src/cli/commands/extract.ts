import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createIntentStream, extractIntents, type Intent } from '@mci/intent-extractor';
import { defineCommand } from '../command.ts';
import type { InputStream } from '../io.ts';

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
export default defineCommand<ExtractOptions, [file: string]>({
  configure(command) {
    command
      .argument('[file]', 'markdown file, or - for stdin', '-')
      .option('--format <format>', 'json or text', 'json');
  },
  async run({ args: [file], options }, io) {
    const format = options.format;
    if (format !== 'json' && format !== 'text') {
      io.stderr.write(`error: --format must be json or text, got "${format}"\n`);
      return EXIT_USAGE;
    }
    let intents: Intent[];
    if (file === '-') {
      intents = await extractFrom(
        io.stdin,
        format === 'text' ? (intent) => io.stdout.write(formatText(intent)) : null,
      );
      if (format === 'text') return EXIT_OK;
    } else {
      let markdown: string;
      try {
        markdown = await readFile(resolve(io.cwd, file), 'utf8');
      } catch (error) {
        io.stderr.write(`error: cannot read ${file}: ${(error as Error).message}\n`);
        return EXIT_USAGE;
      }
      intents = extractIntents(markdown);
    }
    io.stdout.write(
      format === 'json' ? `${JSON.stringify(intents, null, 2)}\n` : intents.map(formatText).join(''),
    );
    return EXIT_OK;
  },
});

/** Streams `input` through the intent extractor, calling `onIntent` as each intent completes. */
async function extractFrom(
  input: InputStream,
  onIntent: ((intent: Intent) => void) | null,
): Promise<Intent[]> {
  const stream = createIntentStream();
  const intents: Intent[] = [];
  const take = (batch: Intent[]) => {
    for (const intent of batch) {
      intents.push(intent);
      onIntent?.(intent);
    }
  };
  const decoder = new TextDecoder();
  for await (const chunk of input) {
    take(stream.push(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true })));
  }
  take(stream.push(decoder.decode()));
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
