import { describe, expect, it } from 'vitest';
import { isExecAttributes, isExecInfo, parseInfoString } from './info-string.ts';

describe('parseInfoString', () => {
  it('reads the language and every attribute form', () => {
    expect(
      parseInfoString('TS exec=true id=fetch-user timeout=5000 title="Load the user" note=\'a b\' dry'),
    ).toEqual({
      lang: 'ts',
      attributes: {
        exec: true,
        id: 'fetch-user',
        timeout: '5000',
        title: 'Load the user',
        note: 'a b',
        dry: true,
      },
    });
  });

  it('turns true and false into booleans, quoted or not', () => {
    expect(parseInfoString('js exec="true" cache=false keep=\'false\'').attributes).toEqual({
      exec: true,
      cache: false,
      keep: false,
    });
  });

  it('reads a first word with = as an attribute, leaving the language empty', () => {
    expect(parseInfoString('exec=true id=a')).toEqual({ lang: '', attributes: { exec: true, id: 'a' } });
    expect(parseInfoString('')).toEqual({ lang: '', attributes: {} });
    expect(parseInfoString('   ')).toEqual({ lang: '', attributes: {} });
  });

  it('never throws on malformed attributes', () => {
    expect(parseInfoString('ts title="unterminated value').attributes).toEqual({
      title: 'unterminated value',
    });
    expect(parseInfoString('ts =x key= a==b').attributes).toEqual({ key: '', a: '=b' });
    expect(parseInfoString('ts id=a id=b').attributes).toEqual({ id: 'b' });
    expect(parseInfoString('ts\texec\t\tx=1').attributes).toEqual({ exec: true, x: '1' });
  });
});

describe('isExecInfo', () => {
  it('accepts exec, exec=true and exec="true" after a language or alone', () => {
    for (const info of [
      'ts exec',
      'ts exec=true',
      'ts exec="true"',
      "ts exec='true'",
      'exec=true',
      'py id=a exec',
    ]) {
      expect(isExecInfo(info), info).toBe(true);
    }
  });

  it('rejects everything else', () => {
    for (const info of [
      'ts',
      'exec',
      'ts exec=false',
      'ts exec=yes',
      'ts executable',
      'ts EXEC',
      'ts noexec',
      '',
    ]) {
      expect(isExecInfo(info), info).toBe(false);
    }
    expect(isExecAttributes({ exec: 'true' })).toBe(false);
  });
});
