import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { schemaToType } from './json-schema-to-ts.ts';
import { renderSandboxGlobals, renderToolDeclaration } from './sandbox-globals-dts.ts';

const tsc = join(import.meta.dirname, '../../../../node_modules/.bin/tsc');

/** Type-checks `usage` against the declarations with the real compiler; returns its diagnostics. */
function typecheck(declarations: string, usage: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'mci-dts-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'globals.d.ts'), declarations);
  writeFileSync(join(dir, 'usage.ts'), `export {};\n${usage}`);
  const args = [
    '--noEmit',
    '--strict',
    '--target',
    'es2022',
    '--lib',
    'es2022',
    '--types',
    '',
    '--module',
    'esnext',
  ];
  try {
    execFileSync(tsc, ['--ignoreConfig', ...args, join(dir, 'globals.d.ts'), join(dir, 'usage.ts')], {
      encoding: 'utf8',
      cwd: dir,
    });
    return '';
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? error);
  }
}

const weather = {
  name: 'get_weather',
  description: 'Current weather for a city.',
  inputSchema: {
    type: 'object',
    properties: {
      location: { type: 'string', description: 'City name */ with a comment end' },
      units: { type: 'string', enum: ['metric', 'imperial'], default: 'metric' },
      days: { type: 'integer', minimum: 1 },
      'x-trace': { type: ['string', 'null'] },
      tags: { type: 'array', items: { type: 'string' } },
      point: { $ref: '#/$defs/point' },
    },
    required: ['location'],
    $defs: {
      point: {
        type: 'object',
        properties: { lat: { type: 'number' }, lon: { type: 'number' } },
        required: ['lat', 'lon'],
      },
    },
  },
};

describe('schemaToType', () => {
  it('renders the value-shaping keywords', () => {
    expect(schemaToType({ type: 'string' })).toBe('string');
    expect(schemaToType({ type: ['integer', 'null'] })).toBe('number | null');
    expect(schemaToType({ enum: ['a', 1, null] })).toBe('"a" | 1 | null');
    expect(schemaToType({ const: true })).toBe('true');
    expect(schemaToType({ type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'number' }] } })).toBe(
      '(string | number)[]',
    );
    expect(
      schemaToType({ type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false }),
    ).toBe('[string, number]');
    expect(schemaToType({ type: 'object', additionalProperties: { type: 'number' } })).toBe(
      '{\n  [key: string]: number;\n}',
    );
    expect(schemaToType({ type: 'object' })).toBe('Record<string, unknown>');
    expect(schemaToType(true)).toBe('unknown');
    expect(schemaToType({ type: 'wat' })).toBe('unknown');
  });

  it('ends recursive refs as unknown instead of looping', () => {
    const tree = {
      $defs: { node: { type: 'object', properties: { child: { $ref: '#/$defs/node' } } } },
      $ref: '#/$defs/node',
    };
    expect(schemaToType(tree)).toContain('child?: unknown');
  });
});

describe('renderSandboxGlobals', () => {
  const dts = renderSandboxGlobals([
    weather,
    { name: 'read-notes', description: 'Reads notes.' },
    {
      name: 'echo',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    },
  ]);

  it('declares output, console, fetch and one function per tool', () => {
    expect(dts).toContain('declare const output: {\n  (value: unknown): void;');
    expect(dts).toContain('declare const console');
    expect(dts).toContain('declare function fetch(');
    expect(dts).toContain('get_weather(props: {');
    expect(dts).toContain('"read-notes"(props?: Record<string, unknown>): Promise<ToolResult>;');
    expect(dts).toContain('@default "metric"');
    expect(dts).not.toContain('City name */');
  });

  it('compiles, and accepts correct calls', () => {
    const usage = `
      const r = await tools.get_weather({ location: 'Oslo', units: 'imperial', point: { lat: 1, lon: 2 }, 'x-trace': null });
      if (r.isError) console.error(r.error); else output(r.structuredContent);
      await tools['read-notes']();
      await tools.echo({ text: 'hi' });
      const res = await fetch('http://127.0.0.1:1/x', { method: 'POST', body: '{}' });
      output(await res.json());
    `;
    expect(typecheck(dts, usage)).toBe('');
  });

  it('declares output.image and output.file', () => {
    const usage = `
      await output.image(new Uint8Array([1]), 'image/png');
      await output.image('AQID', 'image/gif');
      await output.file('a.csv', 'x,y', 'text/csv');
      output.file('b.bin', new ArrayBuffer(2));
    `;
    expect(typecheck(dts, usage)).toBe('');
    expect(typecheck(dts, `output.image(42, 'image/png');`)).toContain('not assignable');
  });

  it('rejects calls that break the input schema', () => {
    expect(typecheck(dts, `await tools.get_weather({ units: 'metric' });`)).toMatch(/location/);
    expect(typecheck(dts, `await tools.get_weather({ location: 'x', units: 'kelvin' });`)).toMatch(/kelvin/);
    expect(typecheck(dts, `await tools.nope();`)).toMatch(/nope/);
  });
});

describe('tools.search and tools.describe', () => {
  it('are declared, with what they resolve to', () => {
    const dts = renderSandboxGlobals([weather]);
    const usage = `
      const found: ToolMatch[] = await tools.search('weather in a city', { limit: 3 });
      const best = found[0];
      if (best) {
        const tool: ToolDescription = await tools.describe(best.name);
        output([best.score, tool.declaration, tool.inputSchema, tool.annotations?.readOnlyHint]);
      }
    `;
    expect(typecheck(dts, usage)).toBe('');
    expect(typecheck(dts, `await tools.search('x', { limit: '3' });`)).toMatch(/TS2322/);
  });

  it('give way to tools of the same name', () => {
    const search = {
      name: 'search',
      description: 'Searches the web.',
      inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    };
    const dts = renderSandboxGlobals([search]);
    expect(typecheck(dts, `const r = await tools.search({ q: 'x' }); output(r.content);`)).toBe('');
    expect(typecheck(dts, `await tools.describe('search');`)).toBe('');
    expect(typecheck(dts, `await tools.search('x');`)).toMatch(/string/);
  });

  it('describe a tool with the declaration /tools.d.ts gives it', () => {
    const declaration = renderToolDeclaration(weather);
    expect(declaration.startsWith('/** Current weather for a city. */\nget_weather(props: {')).toBe(true);
    expect(renderSandboxGlobals([weather])).toContain(
      declaration
        .trimEnd()
        .split('\n')
        .map((line) => `  ${line}`)
        .join('\n'),
    );
  });
});
