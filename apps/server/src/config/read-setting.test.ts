import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.ts';
import {
  parseNumberSetting,
  readEnv,
  readEnvBoolean,
  readEnvChoice,
  readEnvList,
  readEnvNumber,
  readFirstEnv,
} from './read-setting.ts';

describe('parseNumberSetting (flags)', () => {
  it('accepts integers in range', () => {
    expect(parseNumberSetting('8080', '--port', { min: 0, max: 65535 })).toBe(8080);
    expect(parseNumberSetting('0', '--port', { min: 0, max: 65535 })).toBe(0);
    expect(parseNumberSetting('1.5', '--days', { integer: false, min: 0, positive: true })).toBe(1.5);
  });

  it.each([
    ['soon', '--timeout', {}, '--timeout must be a positive integer, got "soon"'],
    ['0', '--timeout', {}, '--timeout must be a positive integer, got "0"'],
    ['1.5', '--timeout', {}, '--timeout must be a positive integer, got "1.5"'],
    ['', '--timeout', {}, '--timeout must be a positive integer, got ""'],
    ['70000', '--port', { min: 0, max: 65535 }, '--port must be an integer from 0 to 65535, got "70000"'],
    ['0', '--days', { integer: false, min: 0, positive: true }, '--days must be a positive number, got "0"'],
    ['1e400', '--days', { integer: false, min: 0, positive: true }, '--days must be a positive number'],
  ] as const)('refuses %j for %s', (raw, name, rule, message) => {
    expect(() => parseNumberSetting(raw, name, rule)).toThrow(message);
    try {
      parseNumberSetting(raw, name, rule);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect(error).toMatchObject({ code: 'CONFIG_INVALID', path: name });
    }
  });
});

describe('environment variables', () => {
  const env = { A: 'x', EMPTY: '', N: '42', BAD: '4x', LIST: ' a, ,b ', YES: 'TRUE', NO: '0', LEVEL: 'warn' };

  it('an empty variable counts as unset', () => {
    expect(readEnv(env, 'A')).toBe('x');
    expect(readEnv(env, 'EMPTY')).toBeUndefined();
    expect(readEnv(env, 'MISSING')).toBeUndefined();
    expect(readFirstEnv(env, ['EMPTY', 'MISSING', 'A'])).toBe('x');
  });

  it('numbers, lists, yes/no and choices', () => {
    expect(readEnvNumber(env, 'N')).toBe(42);
    expect(readEnvNumber(env, 'EMPTY')).toBeUndefined();
    expect(() => readEnvNumber(env, 'BAD')).toThrow('BAD=4x: expected a positive integer');
    expect(() => readEnvNumber(env, 'N', { min: 0, max: 10 })).toThrow(
      'N=42: expected an integer from 0 to 10',
    );
    expect(readEnvList(env, 'LIST')).toEqual(['a', 'b']);
    expect(readEnvBoolean(env, 'YES')).toBe(true);
    expect(readEnvBoolean(env, 'NO')).toBe(false);
    expect(readEnvChoice(env, 'LEVEL', ['info', 'warn'])).toBe('warn');
    expect(() => readEnvChoice(env, 'A', ['info', 'warn'])).toThrow('A=x: expected one of info, warn');
  });
});
