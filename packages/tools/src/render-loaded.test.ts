import { renderStructured, type TemplateContext } from '@mci/schema';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderLoaded } from './render-loaded.ts';

const context: TemplateContext = {
  props: { name: 'Ada', n: 7, list: [1, 'two'], obj: { deep: { x: 1 } }, nothing: null },
  env: { HOME_DIR: '/home/ada' },
};

/** Strings of every kind: plain, text templates, JSON-native placeholders, and broken ones. */
const strings = fc.oneof(
  fc.string(),
  fc.constantFrom(
    'plain',
    'hello {{props.name}}',
    '{!!props.n!!}',
    '{!!props.list!!}',
    '{!!props.obj!!}',
    '{!!props.nothing!!}',
    '{!!props.missing | 3!!}',
    '{{env.HOME_DIR}}/x',
    '{{props.missing}}',
    'a {!!props.n!!} b',
    '{{props.name',
    '@if(props.n > 1)big@else small@endif',
    'user@example.com',
  ),
);

const values = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    strings,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string(), fc.constant('__proto__')), tie('value'), { maxKeys: 4 }),
  ),
})).value;

function outcome(
  render: () => unknown,
): { value: unknown } | { error: string; code: unknown; path: unknown } {
  try {
    return { value: render() };
  } catch (error) {
    const { message, code, path } = error as { message: string; code?: unknown; path?: unknown };
    return { error: message, code, path };
  }
}

describe('renderLoaded', () => {
  it('renders every value to what renderStructured gives, errors included, twice in a row', () => {
    fc.assert(
      fc.property(values, (value) => {
        const expected = outcome(() => renderStructured(value, context));
        // The second call runs the cached plan.
        expect(outcome(() => renderLoaded(value, context))).toEqual(expected);
        expect(outcome(() => renderLoaded(value, context))).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps an own __proto__ key a key', () => {
    const value = JSON.parse('{"__proto__": "{{props.name}}", "x": 1}') as unknown;
    const rendered = renderLoaded(value, context) as Record<string, unknown>;
    expect(Object.getPrototypeOf(rendered)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(rendered, '__proto__')?.value).toBe('Ada');
  });

  it('hands over parts without templates as loaded and never changes the loaded value', () => {
    const value = { fixed: { a: [1, 2] }, name: '{{props.name}}' };
    const before = structuredClone(value);
    const rendered = renderLoaded(value, context) as typeof value;
    expect(rendered).toEqual({ fixed: { a: [1, 2] }, name: 'Ada' });
    expect(rendered.fixed).toBe(value.fixed);
    expect(renderLoaded(value.fixed, context)).toBe(value.fixed);
    expect(value).toEqual(before);
  });

  it('reports a value that contains itself as renderStructured does', () => {
    const value: Record<string, unknown> = { a: '{{props.name}}' };
    value.self = value;
    expect(outcome(() => renderLoaded(value, context))).toEqual(
      outcome(() => renderStructured(value, context)),
    );
    expect(outcome(() => renderLoaded(value, context))).toMatchObject({ code: 'TEMPLATE_TYPE' });
  });
});
