/**
 * Templating engine benchmark: a 10 KB template with 100 placeholders and a
 * 100-iteration loop, rendered from the parse cache; the 100 KB / 10 KB render-time ratio (linear
 * means ~10); and the cost of parsing on every render versus rendering the cached tree.
 */
import { type BenchResult, compared, percentile, sample } from '../../../bench/lib.ts';
import { parseTemplate } from '../src/template/cache.ts';
import { parse } from '../src/template/parser.ts';
import { renderNodes, renderTemplate } from '../src/template/render.ts';
import { renderStructured } from '../src/template/render-structured.ts';
import { rootScope, type TemplateContext } from '../src/template/scope.ts';

const context: TemplateContext = {
  props: {
    user: { name: 'Ada Lovelace', email: 'ada@example.org', id: 1815 },
    values: Array.from({ length: 50 }, (_, i) => `value-${i}`),
    rows: Array.from({ length: 100 }, (_, i) => ({ name: `row ${i}`, qty: i % 7 })),
    premium: true,
  },
  env: { REGION: 'eu-west-1', STAGE: 'prod' },
};

/**
 * One 10 KB unit with exactly 100 placeholders in its source: 20 lines of 4 (paths, an index, a
 * fallback chain), a 100-iteration @for whose body holds 4, an @if holding 1, 15 note lines of 1,
 * then prose up to 10 KB.
 */
function unit(): string {
  let text = '';
  for (let i = 0; i < 20; i++) {
    text += `Line ${i}: {{props.user.name}} <{{ props.user.email }}> value {{props.values.${i}}}`;
    text += ` in {{env.REGION | env.FALLBACK | 'us-east-1'}}. Lorem ipsum dolor sit amet, consectetur adipiscing.\n`;
  }
  text +=
    '@for(i in range(0, 100))\nRow {{i}} of {{props.user.id}}: {{props.rows.1.name}} x {{props.rows.1.qty}}\n@endfor\n';
  text += '@if(props.premium)\nPremium: {{props.user.name}}\n@else\nStandard\n@endif\n';
  for (let k = 0; k < 15; k++) text += `Note ${k}: {{props.values.${k + 20}}}\n`;
  while (text.length < 10 * 1024)
    text += 'Padding prose that keeps the template at ten kilobytes without more placeholders.\n';
  return text;
}

const count = (source: string) => source.split('{{').length - 1;
const small = unit();
const large = Array.from({ length: 10 }, unit).join('');

const median = (samples: number[]) => percentile(samples, 50);

/**
 * Median per-call milliseconds of `a` and of `b`, measured in alternating rounds (`perRound` calls
 * each) so that a change in machine load hits both alike and their ratio stays meaningful.
 */
function paired(
  a: () => unknown,
  b: () => unknown,
  rounds: number,
  perRound: [number, number],
): [number, number] {
  const timesA: number[] = [];
  const timesB: number[] = [];
  const time = (fn: () => unknown, calls: number) => {
    const start = performance.now();
    for (let i = 0; i < calls; i++) fn();
    return (performance.now() - start) / calls;
  };
  for (let r = 0; r < Math.min(5, rounds); r++) time(a, perRound[0]) + time(b, perRound[1]); // warm-up
  for (let r = 0; r < rounds; r++) {
    timesA.push(time(a, perRound[0]));
    timesB.push(time(b, perRound[1]));
  }
  return [median(timesA), median(timesB)];
}

export default async function templateBench(): Promise<BenchResult[]> {
  if (count(small) !== 100) throw new Error(`the 10 KB template has ${count(small)} placeholders, not 100`);
  // Render both once so they are parsed and cached, and check the output grows with the source.
  const out10 = renderTemplate(small, context);
  const out100 = renderTemplate(large, context);
  if (out100.length !== out10.length * 10) throw new Error('the 100 KB output is not 10 x the 10 KB output');

  const render10 = () => renderTemplate(small, context);
  const rate10 = median(await sample(render10, 1500, 200));
  const [cached10, cached100] = paired(render10, () => renderTemplate(large, context), 150, [10, 1]);
  // A cache miss: parse (no freeze) and render. Measured on its own: alternating it with cached
  // renders makes V8's inline caches see frozen and fresh trees at once and slows both.
  const uncached10 = median(
    await sample(() => renderNodes(parse(small), rootScope(context), { iterations: 0 }), 1500, 100),
  );
  const cachedAgain10 = median(await sample(render10, 1000, 100));
  const parse10 = median(await sample(() => parse(small), 1000, 100));

  // Many inline directives on one long line: catches quadratic scanning (each directive looking back
  // to the start of its line), which the multi-line templates above would not show. Sizes 100 KB and
  // 1 MB: below ~100 KB the parse tree still fits V8's young generation, so 10 KB -> 100 KB shows a
  // one-off garbage-collection step (~3x per KB) that is not a complexity problem.
  const oneLine = (kb: number) =>
    'x @if(props.premium)y@else z@endif {{props.user.id}}'.repeat((kb * 1024) / 50);
  const line100 = oneLine(100);
  const line1000 = oneLine(1000);
  const [parseLine100, parseLine1000] = paired(
    () => parse(line100),
    () => parse(line1000),
    8,
    [2, 1],
  );

  const http = {
    url: 'https://api.example.com/users/{{props.user.id}}',
    headers: {
      Authorization: 'Bearer {{env.STAGE}}',
      Accept: 'application/json',
      'X-Region': "{{env.REGION | 'x'}}",
    },
    params: { q: '{{props.user.name}}', limit: '{!!props.user.id!!}' },
    body: {
      type: 'json',
      content: { name: '{{props.user.name}}', rows: '{!!props.rows!!}', premium: '{!!props.premium!!}' },
    },
  };
  parseTemplate(http.url);
  const structured = median(await sample(() => renderStructured(http, context), 1000, 100));

  return [
    {
      name: `template render 10 KB (${(small.length / 1024).toFixed(1)} KB, 100 placeholders, 100-iteration loop), cached`,
      value: 1000 / rate10,
      unit: 'renders/s',
    },
    compared(
      'template render time 100 KB / 10 KB (cached)',
      cached100,
      'ms',
      { name: 'template render 10 KB (cached)', value: cached10 },
      '~10 (linear)',
    ),
    compared(
      'template parse+render 10 KB (uncached)',
      uncached10,
      'ms',
      { name: 'template render 10 KB (cached)', value: cachedAgain10 },
      'cache saves the parse',
    ),
    { name: 'template parse 10 KB', value: parse10, unit: 'ms' },
    compared(
      'template parse time, one-line 1 MB / 100 KB (6,000 inline blocks per 100 KB)',
      parseLine1000,
      'ms',
      { name: 'template parse one-line 100 KB', value: parseLine100 },
      '~10 (linear)',
    ),
    {
      name: 'renderStructured http execution (headers, params, JSON body with native values)',
      value: 1000 / structured,
      unit: 'renders/s',
    },
  ];
}
