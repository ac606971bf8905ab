import { describe, expect, it } from 'vitest';
import { collectEnvDefaults, collectEnvReferences, TemplateError } from '../index.ts';

describe('collectEnvReferences', () => {
  it('finds env variables in placeholders, fallbacks, native placeholders, conditions and loops', () => {
    const template = [
      "{{env.BASE_URL}}/{{props.path | env.DEFAULT_PATH | 'x'}}",
      '{!!env.NATIVE!!}',
      '@if(env.DEBUG)',
      '@elseif(props.level > env.LEVEL)',
      "@elseif('prod' == env.STAGE)",
      '@else',
      '@endif',
      '@for(i in range(env.FROM, env.TO))',
      '@foreach(x in props.items)',
      '{{x.name}} {{env.INNER}}',
      '@endforeach',
      '@endfor',
    ].join('\n');
    expect(collectEnvReferences(template)).toEqual([
      'BASE_URL',
      'DEFAULT_PATH',
      'NATIVE',
      'DEBUG',
      'LEVEL',
      'STAGE',
      'FROM',
      'TO',
      'INNER',
    ]);
  });

  it('lists each variable once, in order of first appearance', () => {
    expect(collectEnvReferences('{{env.B}} {{env.A}} {{env.B}} @if(env.A)@endif')).toEqual(['B', 'A']);
  });

  it('ignores props, input, loop variables, literals and plain text', () => {
    expect(
      collectEnvReferences(
        "{{props.env}} {{input.env}} {{props.x | 'env.FAKE'}} env.TEXT @if(props.a == 'env.B')@endif",
      ),
    ).toEqual([]);
    expect(collectEnvReferences('')).toEqual([]);
  });

  it('throws TEMPLATE_SYNTAX for a template that does not parse', () => {
    expect(() => collectEnvReferences('{{env.A')).toThrowError(TemplateError);
    expect(() => collectEnvReferences('@if(env.A)')).toThrowError(/never closed/);
  });
});

describe('collectEnvDefaults', () => {
  it('gives the fallback of each variable a placeholder can do without, as written', () => {
    const defaults = collectEnvDefaults(
      "{{env.URL | 'http://127.0.0.1:8787'}}/{{env.PATH | props.path | 'x'}} {!!env.LIMIT | 10!!}",
    );
    expect([...defaults]).toEqual([
      ['URL', "'http://127.0.0.1:8787'"],
      ['PATH', "props.path | 'x'"],
      ['LIMIT', '10'],
    ]);
  });

  it('leaves out a variable that some reference needs: no fallback, last alternative, condition, loop', () => {
    expect(collectEnvDefaults("{{env.A | 'a'}} {{env.A}}").size).toBe(0);
    expect(collectEnvDefaults('{{props.x | env.B}}').size).toBe(0);
    expect(collectEnvDefaults("{{env.C | 'c'}}@if(env.C)yes@endif").size).toBe(0);
    expect(collectEnvDefaults("@foreach(x in env.D){{x}}@endforeach{{env.D | 'd'}}").size).toBe(0);
  });
});
