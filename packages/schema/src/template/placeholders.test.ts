import { describe, expect, it } from 'vitest';
import { renderTemplate, type TemplateContext, TemplateError } from '../index.ts';

const context: TemplateContext = {
  props: {
    name: 'Ada',
    count: 3,
    ratio: 0.5,
    negative: -2,
    zero: 0,
    on: true,
    off: false,
    nothing: null,
    empty: '',
    tags: ['x', 'y'],
    user: { name: 'Grace', langs: ['cobol', 'fortran'], address: { city: 'Arlington' } },
    items: [{ name: 'first' }, { name: 'second', parts: [10, 20] }],
    'Content-Type': 'text/plain',
    nested: { 'with-dash': 'dashed', $dollar: 'money', _under: 'score' },
  },
  env: { API_KEY: 'secret', EMPTY: '', UNSET: undefined },
};
const render = (template: string, ctx: TemplateContext = context) => renderTemplate(template, ctx);

describe('placeholders', () => {
  it('resolve dotted paths, with or without spaces inside the braces', () => {
    expect(render('{{props.name}}|{{ props.name }}|{{   props.user.address.city\t}}')).toBe(
      'Ada|Ada|Arlington',
    );
  });

  it('index arrays with numeric segments', () => {
    expect(
      render(
        '{{props.tags.0}}{{props.tags.1}} {{props.items.1.name}} {{props.items.1.parts.1}} {{props.user.langs.0}}',
      ),
    ).toBe('xy second 20 cobol');
  });

  it('read keys with dashes, dollars and underscores', () => {
    expect(
      render(
        '{{props.Content-Type}} {{props.nested.with-dash}} {{props.nested.$dollar}} {{props.nested._under}}',
      ),
    ).toBe('text/plain dashed money score');
  });

  it('read env and input (input defaults to props)', () => {
    expect(render('{{env.API_KEY}} {{input.name}} {{env.EMPTY}}.')).toBe('secret Ada .');
    expect(
      render('{{input.name}}/{{props.name}}', { props: { name: 'p' }, input: { name: 'i' }, env: {} }),
    ).toBe('i/p');
  });

  it('read process.env-like objects', () => {
    expect(
      renderTemplate('{{env.MCI_TEMPLATE_TEST}}', {
        props: {},
        env: { ...process.env, MCI_TEMPLATE_TEST: 'ok' },
      }),
    ).toBe('ok');
  });

  it('render values by type: strings as is, numbers and booleans via String(), null as null, JSON for the rest', () => {
    expect(
      render(
        '{{props.count}} {{props.ratio}} {{props.negative}} {{props.zero}} {{props.on}} {{props.off}} {{props.nothing}}',
      ),
    ).toBe('3 0.5 -2 0 true false null');
    expect(render('{{props.tags}} {{props.user.address}} {{props.items.1}}')).toBe(
      '["x","y"] {"city":"Arlington"} {"name":"second","parts":[10,20]}',
    );
    expect(render('{{props.empty}}')).toBe('');
  });

  it('render a whole context root as JSON', () => {
    expect(renderTemplate('{{props}} {{input}}', { props: { a: 1 }, env: {} })).toBe('{"a":1} {"a":1}');
  });

  it('render strings without escaping anything', () => {
    const text = `<b>"quoted" & 'single' {{not a placeholder}}</b>`;
    expect(renderTemplate('{{props.text}}', { props: { text }, env: {} })).toBe(text);
  });

  it('never re-render values that look like templates', () => {
    expect(
      renderTemplate('{{props.evil}}', { props: { evil: '{{env.API_KEY}} @if(x)' }, env: { API_KEY: 's' } }),
    ).toBe('{{env.API_KEY}} @if(x)');
  });

  it('only see own properties (no prototype members)', () => {
    for (const path of [
      'props.constructor',
      'props.toString',
      'props.__proto__',
      'props.tags.length',
      'props.name.length',
      'env.hasOwnProperty',
    ]) {
      expect(() => render(`{{${path}}}`)).toThrowError(TemplateError);
    }
    const props = JSON.parse('{"__proto__": "own value"}') as Record<string, unknown>;
    expect(renderTemplate('{{props.__proto__}}', { props, env: {} })).toBe('own value');
  });

  it('treat an undefined value as missing', () => {
    expect(() => render('{{env.UNSET}}')).toThrowError(/environment variable UNSET is not set/);
    expect(() => renderTemplate('{{props.u}}', { props: { u: undefined }, env: {} })).toThrowError(
      /props.u is undefined/,
    );
  });

  it('leave text with braces or at signs that are not template syntax alone', () => {
    expect(render('{ "a": 1 } {x} } }} @ a@b.c @home @format @elsewhere @iffy @endpoint @ifs')).toBe(
      '{ "a": 1 } {x} } }} @ a@b.c @home @format @elsewhere @iffy @endpoint @ifs',
    );
  });

  it('treat a run of opening braces as text followed by a placeholder', () => {
    expect(render('{{{props.name}}}')).toBe('{Ada}');
    expect(render('{"n": {{props.count}}}')).toBe('{"n": 3}');
    expect(render('{{{{props.count}}}}')).toBe('{{3}}');
  });

  it('render @@keyword as a literal @keyword', () => {
    expect(render('write @@if(x) and @@endforeach; @@ stays')).toBe('write @if(x) and @endforeach; @@ stays');
  });

  it('render adjacent placeholders and placeholders at the edges', () => {
    expect(render('{{props.name}}{{props.count}}')).toBe('Ada3');
    expect(render('{{props.name}} end')).toBe('Ada end');
    expect(render('start {{props.name}}')).toBe('start Ada');
  });

  it('return templates without syntax unchanged', () => {
    expect(render('')).toBe('');
    expect(render('plain text\nwith lines')).toBe('plain text\nwith lines');
  });
});

describe('fallbacks', () => {
  it('use the first alternative that resolves', () => {
    expect(render("{{env.MISSING | env.API_KEY | 'literal'}}")).toBe('secret');
    expect(render("{{ props.missing | props.other | 'literal' }}")).toBe('literal');
    expect(render("{{props.name|'x'}}")).toBe('Ada');
  });

  it('accept single-quoted, backtick and double-quoted literals', () => {
    expect(render('{{props.m | \'single\'}} {{props.m | `back`}} {{props.m | "double"}}')).toBe(
      'single back double',
    );
  });

  it('keep separators, braces and escaped quotes inside literals', () => {
    expect(render("{{props.m | 'a | b'}}")).toBe('a | b');
    expect(render("{{props.m | '}} and {{'}}")).toBe('}} and {{');
    expect(render("{{props.m | 'it\\'s'}}")).toBe("it's");
    expect(render('{{props.m | `it\'s "fine"`}}')).toBe(`it's "fine"`);
    expect(render("{{props.m | ''}}")).toBe('');
  });

  it('accept number, boolean and null literals', () => {
    expect(render('{{props.m | 42}} {{props.m | -1.5}} {{props.m | true}} {{props.m | null}}')).toBe(
      '42 -1.5 true null',
    );
  });

  it('skip alternatives that are null, but keep empty strings', () => {
    expect(render("{{props.nothing | 'fallback'}}")).toBe('fallback');
    expect(render("{{env.EMPTY | 'fallback'}}")).toBe('');
    expect(render("{{props.zero | 'fallback'}}")).toBe('0');
    expect(render("{{props.off | 'fallback'}}")).toBe('false');
  });

  it('render null when the only alternatives that resolve are null', () => {
    expect(render('{{props.missing | props.nothing}}')).toBe('null');
    expect(render('{{props.nothing | props.missing}}')).toBe('null');
  });

  it('allow a placeholder that is only a literal (a way to write literal braces)', () => {
    expect(render("{{'{{'}}props.name{{'}}'}}")).toBe('{{props.name}}');
  });

  it('fail when no alternative resolves, naming every reason', () => {
    expect(() => render('{{env.A | env.B}}')).toThrowError(
      "line 1: '{{env.A | env.B}}' does not resolve: environment variable A is not set; environment variable B is not set",
    );
  });
});
