import { InvalidArgumentError } from 'commander';
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
