import { describe, expect, it } from 'vitest';
import { renderTemplate, type TemplateContext } from '../index.ts';

const context: TemplateContext = {
  props: {
    n: 3,
    start: 1,
    list: ['a', 'b', 'c'],
    matrix: [
      [1, 2],
      [3, 4],
    ],
    rows: [
      { name: 'x', qty: 2, tags: ['t1', 't2'] },
      { name: 'y', qty: 0, tags: [] },
    ],
    settings: { mode: 'fast', level: 2, nested: { a: 1 } },
    empty: [],
    emptyObject: {},
    status: 'active',
    age: 30,
    limit: 30,
    flag: true,
    zero: 0,
    text: 'abc',
    nothing: null,
    numericText: '42',
  },
  env: { COUNT: '2', RETRIES: '3', DEBUG: 'true', NAME: 'prod' },
};
const render = (template: string, ctx: TemplateContext = context) => renderTemplate(template, ctx);

describe('@for', () => {
  it('iterates from a (inclusive) to b (exclusive)', () => {
    expect(render('@for(i in range(0, 3)){{i}},@endfor')).toBe('0,1,2,');
    expect(render('@for(i in range(2, 5)){{i}}@endfor')).toBe('234');
    expect(render('@for(i in range(-2, 1)){{i}} @endfor')).toBe('-2 -1 0 ');
  });

  it('renders nothing for empty or descending ranges', () => {
    expect(render('[@for(i in range(5, 5)){{i}}@endfor]')).toBe('[]');
    expect(render('[@for(i in range(3, 1)){{i}}@endfor]')).toBe('[]');
  });

  it('takes bounds from paths, including integer strings from env', () => {
    expect(render('@for(i in range(props.start, props.n)){{i}}@endfor')).toBe('12');
    expect(render('@for(i in range(0, env.COUNT)){{i}}@endfor')).toBe('01');
    expect(render('@for( i  in  range( 0 ,props.n ) ){{i}}@endfor')).toBe('012');
  });

  it('nests, with the inner loop seeing the outer variable', () => {
    expect(render('@for(i in range(0, 2))@for(j in range(0, 2)){{i}}{{j}} @endfor@endfor')).toBe(
      '00 01 10 11 ',
    );
    expect(render('@for(i in range(1, 4))@for(j in range(0, i))*@endfor|@endfor')).toBe('*|**|***|');
  });

  it('indexes arrays with the loop variable only through @foreach (paths are static)', () => {
    expect(render('@for(i in range(0, 2))@foreach(row in props.matrix){{row.0}}@endforeach;@endfor')).toBe(
      '13;13;',
    );
  });

  it('lets an inner loop shadow an outer variable of the same name, and restores it after', () => {
    expect(render('@for(i in range(0, 2)){{i}}[@for(i in range(5, 7)){{i}}@endfor]{{i}} @endfor')).toBe(
      '0[56]0 1[56]1 ',
    );
  });
});

describe('@foreach', () => {
  it('iterates arrays (item is the element)', () => {
    expect(render('@foreach(x in props.list){{x}}-@endforeach')).toBe('a-b-c-');
    expect(render('@foreach(row in props.matrix)({{row.0}},{{row.1}})@endforeach')).toBe('(1,2)(3,4)');
  });

  it('iterates objects in key order: the variable is the value, v.key the key, v.value the value', () => {
    expect(render('@foreach(e in props.settings){{e.key}}={{e.value}};@endforeach')).toBe(
      'mode=fast;level=2;nested={"a":1};',
    );
    // As mci-py renders it: {{e}} is the entry's value, not a {key, value} pair.
    expect(render('@foreach(e in props.settings){{e}}|@endforeach')).toBe('fast|2|{"a":1}|');
    // Other paths go into the value; a value's own `key` field is reached through `value`.
    const users = { ada: { name: 'Ada', key: 'k1' }, bob: { name: 'Bob', key: 'k2' } };
    expect(
      renderTemplate('@foreach(u in props.users){{u.key}}:{{u.name}}/{{u.value.key}} @endforeach', {
        props: { users },
        env: {},
      }),
    ).toBe('ada:Ada/k1 bob:Bob/k2 ');
    expect(render('@foreach(e in props.settings)@if(e == "fast")F@endif@endforeach')).toBe('F');
  });

  it('renders nothing for empty arrays and objects', () => {
    expect(
      render('[@foreach(x in props.empty){{x}}@endforeach@foreach(x in props.emptyObject){{x}}@endforeach]'),
    ).toBe('[]');
  });

  it('iterates over a loop variable path (nested collections)', () => {
    expect(
      render('@foreach(row in props.rows){{row.name}}:@foreach(t in row.tags){{t}}@endforeach;@endforeach'),
    ).toBe('x:t1t2;y:;');
  });

  it('iterates input and props alike', () => {
    expect(render('@foreach(x in input.list){{x}}@endforeach')).toBe('abc');
  });
});

describe('@if / @elseif / @else', () => {
  const chain = '@if(props.n == 1)one@elseif(props.n == 2)two@elseif(props.n == 3)three@else many@endif';
  it('renders the first branch whose condition holds, else @else', () => {
    expect(renderTemplate(chain, { props: { n: 1 }, env: {} })).toBe('one');
    expect(renderTemplate(chain, { props: { n: 3 }, env: {} })).toBe('three');
    expect(renderTemplate(chain, { props: { n: 9 }, env: {} })).toBe('many');
    expect(render('@if(props.zero)yes@endif|')).toBe('|');
  });

  it('evaluates only the chosen branch (the others may reference missing paths)', () => {
    expect(render('@if(props.flag)ok@else{{props.missing.deep}}@endif')).toBe('ok');
    expect(render('@if(props.missing){{props.missing.name}}@endif.')).toBe('.');
  });

  it.each([
    ['props.flag', true],
    ['props.n', true],
    ['props.text', true],
    ['props.list', true],
    ['props.settings', true],
    ['env.DEBUG', true],
    ['props.zero', false],
    ['props.nothing', false],
    ['props.empty', false],
    ['props.emptyObject', false],
    ['props.missing', false],
    ['props.missing.deeper', false],
    ['props.text.nope', false],
    ['env.NOT_SET', false],
    ['true', true],
    ['false', false],
    ["''", false],
    ["'x'", true],
    ['0', false],
    ['null', false],
  ])('truthy check @if(%s) is %s', (condition, expected) => {
    expect(render(`@if(${condition})T@else F@endif`)).toBe(expected ? 'T' : 'F');
  });

  it.each([
    ['props.status == "active"', true],
    ["props.status == 'active'", true],
    ['props.status == `active`', true],
    ['props.status != "active"', false],
    ['props.status == "ACTIVE"', false],
    ['props.age == 30', true],
    ['props.age != 31', true],
    ['props.age > 18', true],
    ['props.age < 18', false],
    ['props.age >= 30', true],
    ['props.age <= 29', false],
    ['props.age >= 30.5', false],
    ['props.age == props.limit', true],
    ['props.age < props.n', false],
    ['props.n > props.start', true],
    ['18 < props.age', true],
    ['props.flag == true', true],
    ['props.flag != false', true],
    ['props.nothing == null', true],
    ['props.missing == null', true],
    ['props.missing != "x"', true],
    ['props.zero == null', false],
    ['props.zero == false', false],
    ['props.text == "abc"', true],
    ['env.RETRIES == 3', true],
    ['env.DEBUG == true', true],
    ['env.NAME == "prod"', true],
    ['props.numericText == 42', true],
    ['env.RETRIES > 2', true],
    ['env.RETRIES <= 2', false],
    ['props.numericText >= 42', true],
    ['props.settings.nested == props.settings.nested', true],
    ['props.list == props.list', true],
    ['props.list != props.matrix', true],
    ['props.settings.level == 2', true],
    ['props.age > -1', true],
    ['props.age<31', true],
    ['"a==b" == "a==b"', true],
  ])('comparison @if(%s) is %s', (condition, expected) => {
    expect(render(`@if(${condition})T@else F@endif`)).toBe(expected ? 'T' : 'F');
  });

  it('nests ifs inside loops and loops inside ifs', () => {
    const template =
      '@foreach(row in props.rows)@if(row.qty > 0)@for(i in range(0, row.qty)){{row.name}}@endfor@else (none:{{row.name}})@endif;@endforeach';
    expect(render(template)).toBe('xx;(none:y);');
    expect(
      render(
        '@if(props.flag)@if(props.zero)a@elseif(props.n)@foreach(x in props.list){{x}}@endforeach@endif@endif',
      ),
    ).toBe('abc');
  });

  it('supports blocks nested many levels deep', () => {
    const depth = 40;
    const template = '@if(props.flag)'.repeat(depth) + 'deep' + '@endif'.repeat(depth);
    expect(render(template)).toBe('deep');
  });
});
