import { describe, expect, it } from 'vitest';
import {
  MAX_BLOCK_DEPTH,
  MAX_LOOP_ITERATIONS,
  MAX_OUTPUT_LENGTH,
  renderTemplate,
  type TemplateContext,
  TemplateError,
  type TemplateErrorCode,
} from '../index.ts';

const context: TemplateContext = {
  props: {
    n: 3,
    text: 'abc',
    list: ['a'],
    user: { name: 'Ada', email: 'a@x' },
    half: 1.5,
    big: 2_000_000,
    nothing: null,
    flag: true,
  },
  env: { A: 'x' },
};

function failure(template: string, ctx: TemplateContext = context): TemplateError {
  try {
    renderTemplate(template, ctx);
  } catch (error) {
    expect(error).toBeInstanceOf(TemplateError);
    return error as TemplateError;
  }
  throw new Error(`expected ${JSON.stringify(template)} to fail`);
}

function expectFailure(
  template: string,
  code: TemplateErrorCode,
  line: number,
  message: string | RegExp,
  placeholder?: string,
) {
  const error = failure(template);
  expect(error.code).toBe(code);
  expect(error.line).toBe(line);
  expect(error.message).toBe(`line ${line}: ${error.reason}`);
  if (typeof message === 'string') expect(error.message).toContain(message);
  else expect(error.message).toMatch(message);
  if (placeholder !== undefined) expect(error.placeholder).toBe(placeholder);
  expect(error.name).toBe('TemplateError');
  expect(error).toBeInstanceOf(Error);
}

describe('syntax errors carry the line of the fault', () => {
  it.each([
    [
      'a\nb {{props.n\nc',
      2,
      "'{{props.n': the placeholder is not closed on this line (add '}}')",
      '{{props.n',
    ],
    ['{!!props.n', 1, "add '!!}'", '{!!props.n'],
    ['x {{ }}', 1, 'the placeholder is empty', '{{ }}'],
    [
      "{{ props.n | 'open }}",
      1,
      "a quote inside the placeholder is never closed (escape a quote inside a literal with a backslash: 'it\\'s')",
      undefined,
    ],
    ["{{ it's }}", 1, 'a quote inside the placeholder is never closed', "{{ it's }}"],
    ['{{props.n |}}', 1, 'a fallback alternative is empty', '{{props.n |}}'],
    ['{{props.n || props.text}}', 1, "'||' is not an operator", undefined],
    ['{{props.items[0]}}', 1, "index arrays with dots: 'props.items.0'", '{{props.items[0]}}'],
    ['{{upper(props.text)}}', 1, 'function calls are not supported', undefined],
    ['{{props.n + 1}}', 1, 'arithmetic is not supported', undefined],
    ['{{props.x | https://example.com}}', 1, "quote literal text, like 'https://example.com'", undefined],
    ['{{env}}', 1, "'env' needs a variable name: env.NAME", undefined],
    ['{{env.A.b}}', 1, 'environment variables are strings and have no fields', undefined],
    ["{{'a' 'b'}}", 1, 'is not a single quoted literal', undefined],
    [
      '\n\n@if(props.flag)\nx\n',
      3,
      '@if(props.flag) is never closed: add @endif after its body',
      '@if(props.flag)',
    ],
    ['@for(i in range(0, 2))\n', 1, 'add @endfor', undefined],
    ['@foreach(x in props.list)x', 1, 'add @endforeach', undefined],
    [
      '@if(props.flag)@for(i in range(0,1))x@endif@endfor',
      1,
      "'@endif' does not match the open block @for(i in range(0,1)) at line 1; close that one first with @endfor",
      '@endif',
    ],
    ['ok\n@endif', 2, "'@endif' closes nothing: there is no open block", '@endif'],
    ['@endfor', 1, 'closes nothing', undefined],
    ['@endforeach', 1, 'closes nothing', undefined],
    ['x\n@else\n', 2, "'@else' is not inside an @if block", '@else'],
    [
      '@for(i in range(0,1))\n@elseif(props.n)\n@endfor',
      2,
      "'@elseif' is not inside an @if block (the innermost open block is @for(i in range(0,1)) at line 1)",
      undefined,
    ],
    ['@if(props.n)a@else b@else c@endif', 1, "'@else' comes after @else", undefined],
    ['@if(props.n)a@else b\n@elseif(props.flag)c@endif', 2, "'@elseif' comes after @else", undefined],
    [
      '@if(props.n)a@else(props.flag)b@endif',
      1,
      "'@else' takes no condition; write @elseif(condition)",
      '@else(',
    ],
    ['@if(props.n)a@else if(props.flag)b@endif', 1, "'@else' takes no condition", undefined],
    ['@if props.n\nx@endif', 1, "'@if' must be followed by parentheses, like @if(props.enabled)", '@if'],
    ['@for i in range(0, 2)', 1, 'like @for(i in range(0, 3))', undefined],
    ['@foreach item', 1, 'like @foreach(item in props.items)', undefined],
    ['@elseif', 1, "'@elseif' must be followed by parentheses", undefined],
    [
      '@if(props.n\nx\n@endif',
      1,
      "'@if(props.n': the parenthesis opened by @if( is not closed on this line",
      undefined,
    ],
    ['@if({{props.n}})x@endif', 1, 'write paths without braces: props.x', undefined],
    ['@if()x@endif', 1, 'the condition is empty', '@if()'],
    ['@if(props.n = 3)x@endif', 1, "'=' is not an operator; compare with '=='", undefined],
    [
      '@if(props.n && props.flag)x@endif',
      1,
      "'&&' is not supported; nest @if blocks or use @elseif",
      undefined,
    ],
    ['@if(props.n || props.flag)x@endif', 1, "'||' is not supported", undefined],
    ['@if(!props.flag)x@endif', 1, 'negation is not supported', undefined],
    ['@if(props.n == 1 == 2)x@endif', 1, 'one operator', undefined],
    ['@if(props.n ==)x@endif', 1, "'==' needs an operand on each side", undefined],
    ["@if(props.text == 'abc)x@endif", 1, 'not closed', undefined],
    ['@for(i in 0..3)x@endfor', 1, 'expected @for(variable in range(start, end))', undefined],
    ['@for(i in range(0))x@endfor', 1, 'expected @for(variable in range(start, end))', undefined],
    ['@for(i in range(0, 1.5))x@endfor', 1, 'range bounds are integers or paths, not 1.5', undefined],
    ["@for(i in range(0, '3'))x@endfor", 1, "range bounds are integers or paths, not '3'", undefined],
    ['@for(props in range(0, 1))x@endfor', 1, "the loop variable cannot be named 'props'", undefined],
    ['@foreach(env in props.list)x@endforeach', 1, "cannot be named 'env'", undefined],
    ['@foreach(1x in props.list)x@endforeach', 1, "'1x' is not a valid loop variable name", undefined],
    ['@foreach(x of props.list)x@endforeach', 1, 'expected @foreach(variable in path)', undefined],
    [
      "@foreach(x in 'abc')x@endforeach",
      1,
      "@foreach iterates over a path such as props.items, not the literal 'abc'",
      undefined,
    ],
    ['@foreach(x in env)x@endforeach', 1, "'env' needs a variable name", undefined],
  ])('%j', (template, line, message, placeholder) => {
    expectFailure(template, 'TEMPLATE_SYNTAX', line, message, placeholder);
  });

  it('reports syntax errors before rendering anything, even in branches that would not run', () => {
    expectFailure('@if(props.flag)ok@else{{ broken @endif', 'TEMPLATE_SYNTAX', 1, 'not closed');
  });
});

describe('render errors quote the placeholder and say what to do', () => {
  it('unresolved props list the keys that exist', () => {
    expectFailure(
      'x\n\nHello {{ props.user.mail }}',
      'TEMPLATE_UNRESOLVED',
      3,
      "'{{ props.user.mail }}' does not resolve: props.user has no key 'mail' (its keys: name, email); pass a value for it, or add a fallback: {{props.user.mail | 'default'}}",
      '{{ props.user.mail }}',
    );
  });

  it('unset env variables suggest a fallback', () => {
    expectFailure(
      '{{env.TOKEN}}',
      'TEMPLATE_UNRESOLVED',
      1,
      "environment variable TOKEN is not set; set it, or add a fallback: {{env.TOKEN | 'default'}}",
    );
  });

  it('out-of-range indexes and non-numeric indexes say so', () => {
    expectFailure(
      '{{props.list.3}}',
      'TEMPLATE_UNRESOLVED',
      1,
      'props.list has 1 element, so index 3 is out of range',
    );
    expectFailure(
      '{{props.list.first}}',
      'TEMPLATE_UNRESOLVED',
      1,
      "props.list is an array: index it with a number (props.list.0), not 'first'",
    );
  });

  it('paths through scalars and null say what the value is', () => {
    expectFailure(
      '{{props.text.size}}',
      'TEMPLATE_UNRESOLVED',
      1,
      `props.text is a string ("abc"), so it has no 'size'`,
    );
    expectFailure('{{props.nothing.x}}', 'TEMPLATE_UNRESOLVED', 1, "props.nothing is null, so it has no 'x'");
  });

  it('unknown roots are syntax errors that suggest quoting and name the loop variables in scope', () => {
    expectFailure(
      '{{item.name}}',
      'TEMPLATE_SYNTAX',
      1,
      "'item' is not defined here: paths start with props., input., env.;",
    );
    expectFailure(
      '{{localhost}}',
      'TEMPLATE_SYNTAX',
      1,
      "if 'localhost' is meant as text, quote it: 'localhost'",
    );
    expectFailure("{{props.host | localhost | 'x'}}", 'TEMPLATE_SYNTAX', 1, "quote it: 'localhost'");
    expectFailure('@if(props.mode == fast)x@endif', 'TEMPLATE_SYNTAX', 1, "'fast' is not defined here");
    expectFailure(
      '@foreach(row in props.list)\n@for(i in range(0, 1))\n{{rows.name}}\n@endfor\n@endforeach',
      'TEMPLATE_SYNTAX',
      3,
      "'rows' is not defined here: paths start with props., input., env. or a loop variable (i, row)",
    );
    expectFailure('@foreach(x in x.items)@endforeach', 'TEMPLATE_SYNTAX', 1, "'x' is not defined here");
    expectFailure('@for(i in range(0, i))@endfor', 'TEMPLATE_SYNTAX', 1, "'i' is not defined here");
  });

  it('a loop variable is not visible after its loop', () => {
    expectFailure('@for(i in range(0, 1))@endfor{{i}}', 'TEMPLATE_SYNTAX', 1, "'i' is not defined here");
    expectFailure(
      '@foreach(x in props.list)@endforeach\n@if(x)@endif',
      'TEMPLATE_SYNTAX',
      2,
      "'x' is not defined here",
    );
  });

  it('loops over missing or non-iterable values', () => {
    expectFailure(
      '\n@foreach(x in props.items)\n@endforeach',
      'TEMPLATE_UNRESOLVED',
      2,
      "props has no key 'items'",
      '@foreach(x in props.items)',
    );
    expectFailure(
      '@foreach(x in props.items)@endforeach',
      'TEMPLATE_UNRESOLVED',
      1,
      'wrap the loop in @if(props.items)',
    );
    expectFailure(
      '@foreach(x in props.text)@endforeach',
      'TEMPLATE_TYPE',
      1,
      '@foreach needs an array or an object, but props.text is a string ("abc")',
    );
    expectFailure('@foreach(x in props.n)@endforeach', 'TEMPLATE_TYPE', 1, 'props.n is a number (3)');
    expectFailure('@foreach(x in props.nothing)@endforeach', 'TEMPLATE_TYPE', 1, 'props.nothing is null');
  });

  it('range bounds that are missing or not integers', () => {
    expectFailure(
      '@for(i in range(0, props.count))@endfor',
      'TEMPLATE_UNRESOLVED',
      1,
      "props has no key 'count'",
    );
    expectFailure(
      '@for(i in range(0, props.half))@endfor',
      'TEMPLATE_TYPE',
      1,
      'range bounds must be integers, but props.half is a number (1.5)',
    );
    expectFailure(
      '@for(i in range(props.text, 2))@endfor',
      'TEMPLATE_TYPE',
      1,
      'props.text is a string ("abc")',
    );
    expectFailure(
      '@for(i in range(0, env.A))@endfor',
      'TEMPLATE_TYPE',
      1,
      'env.A is a string (value not shown)',
    );
  });

  it('ordering comparisons between non-numbers', () => {
    expectFailure(
      '@if(props.text > 1)x@endif',
      'TEMPLATE_TYPE',
      1,
      `'>' compares numbers, but props.text is a string ("abc"); use == or != for other values`,
      '@if(props.text > 1)',
    );
    expectFailure(
      '@if(props.n < "b")x@endif',
      'TEMPLATE_TYPE',
      1,
      `'<' compares numbers, but "b" is a string ("b")`,
    );
    expectFailure('@if(props.flag >= 1)x@endif', 'TEMPLATE_TYPE', 1, 'props.flag is a boolean (true)');
    expectFailure('@if(props.nothing <= 1)x@endif', 'TEMPLATE_TYPE', 1, 'props.nothing is null');
    expectFailure('@if(props.list > 0)x@endif', 'TEMPLATE_TYPE', 1, 'props.list is an array');
    expectFailure(
      '@if(props.n > 5)a@elseif(props.age > 1)b@endif',
      'TEMPLATE_UNRESOLVED',
      1,
      "'@elseif(props.age > 1)': props has no key 'age'",
    );
  });

  it('never show the values of environment variables (they are often secrets)', () => {
    const ctx = { props: {}, env: { API_KEY: 'sk-very-secret' } };
    for (const template of [
      '@if(env.API_KEY > 1)x@endif',
      '@if(1 <= env.API_KEY)x@endif',
      '@for(i in range(env.API_KEY, 2))@endfor',
    ]) {
      const error = failure(template, ctx);
      expect(error.code).toBe('TEMPLATE_TYPE');
      expect(error.message).toContain('value not shown');
      expect(error.message).not.toContain('sk-very');
    }
  });

  it('JSON-native placeholders in plain text', () => {
    expectFailure(
      'value: {!!props.n!!}',
      'TEMPLATE_SYNTAX',
      1,
      "'{!!props.n!!}': a JSON-native placeholder must be the entire value of a field (in http headers, params, body or cli args), with no text around it; to insert the value into text, use {{props.n}}",
    );
    expectFailure('{!!props.n!!}', 'TEMPLATE_SYNTAX', 1, 'entire value of a field');
  });

  it('values that cannot be written', () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const error = failure('{{props.c}}', { props: { c: circular }, env: {} });
    expect(error.code).toBe('TEMPLATE_TYPE');
    expect(error.message).toContain('cannot be written as JSON');
    expect(failure('{{props.f}}', { props: { f: () => 1 }, env: {} }).code).toBe('TEMPLATE_TYPE');
  });

  it(`stops runaway loops after ${MAX_LOOP_ITERATIONS} iterations`, () => {
    expectFailure(
      '@for(i in range(0, props.big))@endfor',
      'TEMPLATE_LIMIT',
      1,
      'more than 1000000 loop iterations',
    );
    expectFailure(
      '@for(i in range(0, 1001))@for(j in range(0, 1000))@endfor@endfor',
      'TEMPLATE_LIMIT',
      1,
      "'@for(j in range(0, 1000))'",
    );
  });

  it(`stops output from growing past ${MAX_OUTPUT_LENGTH} characters`, () => {
    const ctx = { props: { chunk: 'x'.repeat(4096) }, env: {} };
    const error = failure('@for(i in range(0, 100000)){{props.chunk}}@endfor', ctx);
    expect(error.code).toBe('TEMPLATE_LIMIT');
    expect(error.message).toContain(`the output grew past ${MAX_OUTPUT_LENGTH} characters`);
    const nested = failure(
      '@for(i in range(0, 100))@foreach(x in props.list)@for(j in range(0, 9000)){{props.chunk}}@endfor@endforeach@endfor',
      {
        ...ctx,
        props: { ...ctx.props, list: [1] },
      },
    );
    expect(nested.code).toBe('TEMPLATE_LIMIT');
  });

  it(`rejects blocks nested more than ${MAX_BLOCK_DEPTH} deep when parsing`, () => {
    const nested = (depth: number) => `${'@if(props.flag)\n'.repeat(depth)}x\n${'@endif\n'.repeat(depth)}`;
    expect(renderTemplate(nested(MAX_BLOCK_DEPTH), context)).toBe('x\n');
    expectFailure(
      nested(MAX_BLOCK_DEPTH + 1),
      'TEMPLATE_LIMIT',
      MAX_BLOCK_DEPTH + 1,
      `blocks nest more than ${MAX_BLOCK_DEPTH} deep`,
    );
    expectFailure(nested(100_000), 'TEMPLATE_LIMIT', MAX_BLOCK_DEPTH + 1, 'nest');
  });

  it('counts iterations per render, not per process', () => {
    const template = '@for(i in range(0, 600000))@endfor';
    expect(renderTemplate(template, context)).toBe('');
    expect(renderTemplate(template, context)).toBe('');
  });
});
