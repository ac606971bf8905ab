import { describe, expect, it } from 'vitest';
import { Policies } from './policy.ts';

describe('Policies', () => {
  const tools = {
    charge: { name: 'charge', toolset: 'billing', tags: ['money'], annotations: { destructiveHint: true } },
    refund: { name: 'refund', toolset: 'billing', tags: ['money'] },
    delete_all: { name: 'delete_all' },
    read_file: { name: 'read_file', annotations: { readOnlyHint: true } },
  };

  it('decides tools by the first matching rule, all matchers of a rule at once, else the default', () => {
    const policies = new Policies([
      { tool: 'delete_*', decision: 'deny' },
      { toolset: 'billing', tag: 'money', annotation: 'destructiveHint', decision: 'allow' },
      { toolset: 'billing', decision: 'ask' },
    ]);
    expect(policies.forTool(tools.delete_all)).toEqual({ decision: 'deny', rule: 0 });
    expect(policies.forTool(tools.charge)).toEqual({ decision: 'allow', rule: 1 });
    expect(policies.forTool(tools.refund)).toEqual({ decision: 'ask', rule: 2 });
    expect(policies.forTool(tools.read_file)).toEqual({ decision: 'allow' });
    expect(new Policies([]).forTool(tools.charge)).toEqual({ decision: 'ask' });
  });

  it('decides fetch by host or host:port glob, methods and path prefixes; no rule: undefined', () => {
    const policies = new Policies([
      { fetch: '*.example.com', methods: ['delete'], decision: 'deny' },
      { fetch: 'api.example.com', paths: ['/v1/pay'], decision: 'ask' },
      { fetch: 'api.example.com:443', decision: 'allow' },
      { fetch: '127.0.0.1:8080', decision: 'allow' },
    ]);
    const at = (url: string, method = 'GET') => policies.forFetch(new URL(url), method);
    expect(at('https://api.example.com/x', 'DELETE')).toEqual({ decision: 'deny', rule: 0 });
    expect(at('https://api.example.com/v1/pay/7', 'POST')).toEqual({ decision: 'ask', rule: 1 });
    expect(at('https://api.example.com/v1/other')).toEqual({ decision: 'allow', rule: 2 });
    expect(at('http://127.0.0.1:8080/')).toEqual({ decision: 'allow', rule: 3 });
    expect(at('http://127.0.0.1:9090/')).toBeUndefined();
    expect(at('https://example.org/')).toBeUndefined();
  });

  it('refuses rules without a matcher, mixing tools and fetch, or with fetch options alone, naming the field', () => {
    const issue = (rules: unknown[]) => {
      try {
        new Policies(rules as never);
      } catch (error) {
        const [first] = (error as { issues: Array<{ path: PropertyKey[]; message: string }> }).issues;
        return `${first!.path.join('.')}: ${first!.message}`;
      }
      return 'accepted';
    };
    expect(issue([{ decision: 'deny' }])).toBe(
      '0: a rule needs a matcher: tool, toolset, tag, annotation or fetch',
    );
    expect(issue([{ tool: 'x', fetch: 'a.com', decision: 'deny' }])).toBe(
      '0.fetch: a rule matches tools or fetch, not both: split it in two',
    );
    expect(issue([{ tool: 'x', paths: ['/a'], decision: 'deny' }])).toBe('0.paths: paths needs fetch');
    expect(issue([{ fetch: 'a.com', paths: ['a'], decision: 'deny' }])).toMatch(/^0\.paths\.0: /);
    expect(issue([{ tool: 'x', decision: 'maybe' }])).toMatch(/^0\.decision: /);
  });
});
