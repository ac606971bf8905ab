import { describe, expect, it } from 'vitest';
import { renderStructured, type TemplateContext, TemplateError } from '../index.ts';

const context: TemplateContext = {
  props: {
    q: 'cats',
    limit: 10,
    on: true,
    nothing: null,
    tags: ['a', 'b'],
    filter: { since: '2026', deep: { x: [1] } },
  },
  env: { TOKEN: 't0k', PAGE_SIZE: '25' },
};

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

describe('renderStructured', () => {
  it('renders every string at any depth and keeps other values', () => {
    const input = {
      url: 'https://api.example.com/search',
      headers: { Authorization: 'Bearer {{env.TOKEN}}', Accept: 'application/json' },
      params: { q: '{{props.q}}', size: "{{env.PAGE_SIZE | '10'}}" },
      body: {
        type: 'json',
        content: {
          list: ['{{props.tags.0}}', 7, false, null, ['{{props.limit}}']],
          nested: { deeper: '@if(props.on)yes@endif' },
        },
      },
      timeout_ms: 5000,
      retries: { attempts: 2 },
    };
    expect(renderStructured(input, context)).toEqual({
      url: 'https://api.example.com/search',
      headers: { Authorization: 'Bearer t0k', Accept: 'application/json' },
      params: { q: 'cats', size: '25' },
      body: { type: 'json', content: { list: ['a', 7, false, null, ['10']], nested: { deeper: 'yes' } } },
      timeout_ms: 5000,
      retries: { attempts: 2 },
    });
  });

  it('renders a top-level string, array or scalar', () => {
    expect(renderStructured('{{props.q}}', context)).toBe('cats');
    expect(renderStructured(['--q', '{{props.q}}', '{!!props.limit!!}'], context)).toEqual([
      '--q',
      'cats',
      10,
    ]);
    expect(renderStructured(42, context)).toBe(42);
    expect(renderStructured(null, context)).toBe(null);
    expect(renderStructured(undefined, context)).toBe(undefined);
  });

  it('never mutates its input and returns fresh containers', () => {
    const input = deepFreeze({ a: ['{{props.q}}', { b: '{{props.limit}}' }], c: { d: 'plain' } });
    const output = renderStructured(input, context) as typeof input;
    expect(output).toEqual({ a: ['cats', { b: '10' }], c: { d: 'plain' } });
    expect(output).not.toBe(input);
    expect(output.a).not.toBe(input.a);
    expect(output.c).not.toBe(input.c);
  });

  it('does not template object keys', () => {
    expect(renderStructured({ '{{props.q}}': 'v' }, context)).toEqual({ '{{props.q}}': 'v' });
  });

  it('keeps a "__proto__" key as data without touching prototypes', () => {
    const input = JSON.parse('{"__proto__": {"polluted": "{{props.q}}"}}') as Record<string, unknown>;
    const output = renderStructured(input, context) as Record<string, unknown>;
    expect(Object.getPrototypeOf(output)).toBe(Object.prototype);
    expect(Object.hasOwn(output, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.stringify(output)).toBe('{"__proto__":{"polluted":"cats"}}');
  });

  it('passes non-plain objects through as they are', () => {
    const date = new Date(0);
    const bytes = new Uint8Array([1, 2]);
    const output = renderStructured({ date, bytes }, context) as { date: Date; bytes: Uint8Array };
    expect(output.date).toBe(date);
    expect(output.bytes).toBe(bytes);
  });

  it('names the JSON path of the failing string', () => {
    const input = { headers: { Authorization: 'Bearer {{env.MISSING}}' } };
    const error = (() => {
      try {
        renderStructured(input, context);
      } catch (e) {
        return e as TemplateError;
      }
    })();
    expect(error).toBeInstanceOf(TemplateError);
    expect(error?.path).toBe('headers.Authorization');
    expect(error?.line).toBe(1);
    expect(error?.placeholder).toBe('{{env.MISSING}}');
    expect(error?.message).toBe(
      "at headers.Authorization, line 1: '{{env.MISSING}}' does not resolve: environment variable MISSING is not set; set it, or add a fallback: {{env.MISSING | 'default'}}",
    );
    expect(() => renderStructured(['a', ['{{props.x', 'b']], context)).toThrowError(
      /^at \[1\]\[0\], line 1: /,
    );
    expect(() => renderStructured('{{props.missing}}', context)).toThrowError(/^line 1: /);
  });

  it('starts the JSON paths in errors at the given path of a larger structure', () => {
    expect(() => renderStructured('{{props.missing}}', context, 'body.q')).toThrowError(
      /^at body\.q, line 1: /,
    );
    expect(() => renderStructured({ tags: ['{{props.x'] }, context, 'body')).toThrowError(
      /^at body\.tags\[0\], line 1: /,
    );
  });

  it('rejects circular values', () => {
    const loop: Record<string, unknown> = { a: '{{props.q}}' };
    loop.self = loop;
    expect(() => renderStructured(loop, context)).toThrowError(/circular/);
  });

  it('allows the same object twice (shared, not circular)', () => {
    const shared = { v: '{{props.q}}' };
    expect(renderStructured({ a: shared, b: [shared] }, context)).toEqual({
      a: { v: 'cats' },
      b: [{ v: 'cats' }],
    });
  });
});

describe('JSON-native placeholders', () => {
  it('replace a whole string with the raw value, keeping its type', () => {
    const output = renderStructured(
      {
        n: '{!!props.limit!!}',
        b: '{!!props.on!!}',
        z: '{!!props.nothing!!}',
        arr: '{!!props.tags!!}',
        obj: '{!!props.filter!!}',
        s: '{!!props.q!!}',
        env: '{!!env.PAGE_SIZE!!}',
        spaced: '{!! props.limit !!}',
      },
      context,
    );
    expect(output).toEqual({
      n: 10,
      b: true,
      z: null,
      arr: ['a', 'b'],
      obj: { since: '2026', deep: { x: [1] } },
      s: 'cats',
      env: '25',
      spaced: 10,
    });
  });

  it('copy raw objects, so changing the output never changes the props', () => {
    const output = renderStructured({ obj: '{!!props.filter!!}' }, context) as {
      obj: { deep: { x: number[] } };
    };
    output.obj.deep.x.push(2);
    expect(context.props.filter).toEqual({ since: '2026', deep: { x: [1] } });
  });

  it('support fallbacks, with literals of any JSON type', () => {
    expect(
      renderStructured(
        {
          a: '{!!props.missing | props.limit!!}',
          b: '{!!props.missing | 5!!}',
          c: '{!!props.missing | false!!}',
          d: "{!!props.missing | 'text'!!}",
          e: '{!!props.nothing | 1!!}',
        },
        context,
      ),
    ).toEqual({ a: 10, b: 5, c: false, d: 'text', e: 1 });
  });

  it('fail on a missing path, quoting the placeholder and naming the field', () => {
    expect(() => renderStructured({ a: { b: ['ok', '{!!props.missing!!}'] } }, context)).toThrowError(
      "at a.b[1], line 1: '{!!props.missing!!}' does not resolve: props has no key 'missing' (its keys: q, limit, on, nothing, tags, filter); pass a value for it, or add a fallback: {!!props.missing | 'default'!!}",
    );
  });

  it('fail when mixed with text, whitespace or other placeholders', () => {
    for (const bad of [
      ' {!!props.limit!!}',
      '{!!props.limit!!}\n',
      '{{props.q}}{!!props.limit!!}',
      '{!!props.limit!!}{!!props.on!!}',
    ]) {
      const error = (() => {
        try {
          renderStructured({ bad }, context);
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(TemplateError);
      expect((error as TemplateError).code).toBe('TEMPLATE_SYNTAX');
      expect((error as TemplateError).placeholder).toMatch(/^\{!!/);
    }
  });
});
