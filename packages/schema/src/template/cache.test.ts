import { describe, expect, it } from 'vitest';
import { parseTemplate, renderTemplate, TEMPLATE_CACHE_SIZE, TemplateError } from '../index.ts';
import { templateCacheSize } from './cache.ts';

describe('parseTemplate', () => {
  it('parses into a tree of nodes with line numbers', () => {
    const nodes = parseTemplate(
      "Hi {{props.name | 'you'}}\n@if(props.vip)\n★\n@else\n-\n@endif\n@foreach(x in props.xs){{x}}@endforeach",
    );
    expect(nodes.map((n) => n.type)).toEqual(['text', 'placeholder', 'text', 'if', 'foreach']);
    expect(nodes[1]).toEqual({
      type: 'placeholder',
      alternatives: [
        { kind: 'path', segments: ['props', 'name'], text: 'props.name' },
        { kind: 'literal', value: 'you', text: "'you'" },
      ],
      source: "{{props.name | 'you'}}",
      line: 1,
    });
    const ifNode = nodes[3];
    expect(ifNode?.type === 'if' && ifNode.branches[0]?.line).toBe(2);
    expect(ifNode?.type === 'if' && ifNode.otherwise).toEqual([{ type: 'text', value: '-\n' }]);
    expect(nodes[4]).toMatchObject({
      type: 'foreach',
      variable: 'x',
      line: 7,
      collection: { segments: ['props', 'xs'] },
    });
  });

  it('returns the same frozen tree for the same source', () => {
    const source = `cached {{props.a}} ${Math.random()}`;
    const first = parseTemplate(source);
    expect(parseTemplate(source)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first[1])).toBe(true);
    expect(() => (first as unknown[]).push({})).toThrow(TypeError);
  });

  it('keeps at most TEMPLATE_CACHE_SIZE entries, dropping the least recently used', () => {
    const early = `early {{props.a}} ${Math.random()}`;
    const evicted = parseTemplate(early);
    const keep = `keep {{props.a}} ${Math.random()}`;
    const kept = parseTemplate(keep);
    for (let i = 0; i < TEMPLATE_CACHE_SIZE + 50; i++) {
      parseTemplate(`filler {{props.a}} ${i}`);
      if (i % 100 === 0) parseTemplate(keep); // recently used: stays
    }
    expect(templateCacheSize()).toBe(TEMPLATE_CACHE_SIZE);
    expect(parseTemplate(keep)).toBe(kept);
    const reparsed = parseTemplate(early);
    expect(reparsed).not.toBe(evicted);
    expect(reparsed).toEqual(evicted);
  });

  it('bounds the cache by characters too, and does not keep huge templates', () => {
    const huge = `${'x'.repeat(5 * 1024 * 1024)}{{props.a}}`;
    const first = parseTemplate(huge);
    expect(parseTemplate(huge)).not.toBe(first);
    const big = (i: number) => `${String(i).padEnd(3 * 1024 * 1024, '.')}{{props.a}}`;
    const kept = Array.from({ length: 6 }, (_, i) => parseTemplate(big(i)));
    expect(parseTemplate(big(5))).toBe(kept[5]);
    expect(parseTemplate(big(0))).not.toBe(kept[0]); // 6 x 3 M characters > 16 M: the oldest went
  });

  it('does not cache failures: the same bad template fails every time', () => {
    expect(() => parseTemplate('@if(x')).toThrowError(TemplateError);
    expect(() => parseTemplate('@if(x')).toThrowError(TemplateError);
  });

  it('renders the same output from a cached tree as from a fresh one', () => {
    const template = '@for(i in range(0, props.n)){{i}}@endfor';
    expect(renderTemplate(template, { props: { n: 3 }, env: {} })).toBe('012');
    expect(renderTemplate(template, { props: { n: 2 }, env: {} })).toBe('01');
  });
});
