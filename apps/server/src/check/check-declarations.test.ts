import { ProgramChecker } from '@mci/check';
import { describe, expect, it } from 'vitest';
import { checkDeclarations } from './check-declarations.ts';

const tools = [
  {
    name: 'greet',
    description: 'Greets someone.',
    inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  },
  {
    name: 'strict',
    inputSchema: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false },
  },
  { name: 'kebab-case' },
];

describe('checkDeclarations', () => {
  const checker = new ProgramChecker(checkDeclarations(tools));

  it('declares every global the sandbox has: a program using them all has no findings', () => {
    const code = `
const found = await tools.search('greet', { limit: 3 });
const described = await tools.describe(found[0]!.name);
const hello = await tools.greet({ name: described.name });
await tools['kebab-case']();
await tools.strict({ a: 'x' });
const url = new URL('https://example.com/a?b=1');
url.searchParams.append('c', '2');
const params = new URLSearchParams({ q: 'x' });
const bytes = new TextEncoder().encode(params.toString());
const text = new TextDecoder().decode(bytes);
const headers = new Headers({ accept: 'text/plain' });
const id = crypto.randomUUID();
const copy = structuredClone({ id, when: new Date() });
await new Promise<void>((resolve) => setTimeout(resolve, 1));
queueMicrotask(() => console.log('later'));
const response = await fetch(url, { method: 'GET', headers: { accept: headers.get('accept') ?? '' } });
await output.image(new Uint8Array([137, 80, 78, 71]), 'image/png');
await output.file('notes.txt', text, 'text/plain');
output({ hello: hello.content, status: response.status, copy, list: await Array.fromAsync([1, 2]) });
return [1, 2, 3].findLast((n) => n > 1);`;
    expect(checker.check(code)).toMatchObject({ errors: [], warnings: [] });
  });

  it('knows which tools forbid extra input properties', () => {
    expect(checkDeclarations(tools).tools).toEqual([
      { name: 'greet', closed: false, required: ['name'] },
      { name: 'strict', closed: true, required: [] },
      { name: 'kebab-case', closed: false, required: [] },
    ]);
  });

  it('catches a tool called in a callback, and what the sandbox does not have', () => {
    const nested = checker.check(
      `const names = ['a'];\nawait Promise.all(names.map((n) => tools.greet({ nme: n })));`,
    );
    expect(nested.errors).toMatchObject([
      {
        line: 2,
        code: 2561,
        message:
          "tools.greet: input property 'name' is required ('nme' is not in its input schema. Did you mean 'name'?)",
      },
    ]);
    expect(checker.check(`setTimout(() => {}, 10);`).errors).toMatchObject([
      { code: 2552, message: expect.stringContaining("Did you mean 'setTimeout'?") },
    ]);
  });
});
