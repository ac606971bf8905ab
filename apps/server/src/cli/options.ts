import { InvalidArgumentError, Option } from 'commander';
import { ConfigError } from '../config/config-error.ts';
import { type NumberRule, parseNumberSetting } from '../config/read-setting.ts';

/**
 * A commander argument parser for a numeric option (`--port`, `--timeout`), by the one setting
 * reader: `--timeout must be a positive integer, got "soon"` is a usage error.
 */
export function numberOption(name: string, rule: NumberRule = {}): (value: string) => number {
  return (value) => {
    try {
      return parseNumberSetting(value, name, rule);
    } catch (error) {
      if (error instanceof ConfigError) throw new InvalidArgumentError(error.message);
      throw error;
    }
  };
}

/** Commander collector for a repeatable option (`--allow-net A --allow-net B`). */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Commander collector for repeatable `-e KEY=VAL` options. */
export function collectEnvOption(
  value: string,
  previous: Record<string, string> = {},
): Record<string, string> {
  const equals = value.indexOf('=');
  if (equals <= 0) throw new InvalidArgumentError(`expected KEY=VALUE, got "${value}"`);
  return { ...previous, [value.slice(0, equals)]: value.slice(equals + 1) };
}

/** The languages `--lang` names, and the longer spellings it also accepts. */
const LANGUAGES: Record<string, 'ts' | 'js'> = { ts: 'ts', js: 'js', typescript: 'ts', javascript: 'js' };

/**
 * Commander parser of `--lang` (`mci run`, `mci submit`): `ts` or `js` (`typescript` and `javascript`
 * are accepted too).
 * @throws InvalidArgumentError for any other value (a usage error)
 */
export function langOption(value: string): 'ts' | 'js' {
  const lang = LANGUAGES[value.toLowerCase()];
  if (lang === undefined) throw new InvalidArgumentError(`--lang must be ts or js, got "${value}"`);
  return lang;
}

/** The help line of `-f, --file` in the commands that read the tool file themselves. */
const TOOL_FILE_HELP = 'tool file (default: mci.json, mci.yaml or mci.yml here, else examples/mci.yaml)';

/** `-f, --file <path>`: the tool file; `description` replaces the help line where the file is another's. */
export function toolFileOption(description: string = TOOL_FILE_HELP): Option {
  return new Option('-f, --file <path>', description);
}

/** `-e, --env <KEY=VALUE>`, repeatable, into a record; `description` says what sees the values. */
export function envOption(description: string): Option {
  return new Option('-e, --env <KEY=VALUE>', description).argParser(collectEnvOption);
}

/** `-m, --memory <mb>`: the isolate memory limit of a sandboxed run. */
export function memoryOption(): Option {
  return new Option('-m, --memory <mb>', 'isolate memory limit in MB (default 128)').argParser(
    numberOption('--memory'),
  );
}

/** `--allow-net <host[:port]>`, repeatable: the hosts a sandboxed `fetch` may reach. */
export function allowNetOption(
  description = 'let fetch reach this host (repeatable; fetch reaches nothing else)',
): Option {
  return new Option('--allow-net <host[:port]>', description).argParser(collect);
}

/** `--max-steps <n>`: the most model requests of a chat turn. */
export function maxStepsOption(): Option {
  return new Option('--max-steps <n>', 'most model requests per turn (default 8)').argParser(
    numberOption('--max-steps'),
  );
}

/** `--tool-prompt-budget <tokens>`: the room the tool declarations get in a generated system prompt. */
export function toolPromptBudgetOption(): Option {
  return new Option(
    '--tool-prompt-budget <tokens>',
    'most estimated tokens the tool declarations take in the generated system prompt; over it the tools are listed by name (default 8000)',
  ).argParser(numberOption('--tool-prompt-budget'));
}
