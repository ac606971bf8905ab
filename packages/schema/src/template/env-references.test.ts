import { describe, expect, it } from 'vitest';
import { collectEnvReferences, TemplateError } from '../index.ts';

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
