import { describe, expect, it } from 'vitest';
import { createToolRunner, loadTools, ToolError } from '../src/index.ts';
import { runnerFor, runnerForTool, toolDir } from './helpers/tool-dir.ts';
import { expectCanceled } from './helpers/results.ts';

const echoProps = { type: 'text', text: '{{props}}' };

describe('props validation', () => {
  it('applies defaults and reports every violation in one error result', async () => {
    await using t = await runnerForTool({
      name: 'weather',
      inputSchema: {
        type: 'object',
        properties: {
          city: { type: 'string', minLength: 2 },
          units: { enum: ['metric', 'imperial'], default: 'metric' },
          days: { type: 'integer', minimum: 1, maximum: 7, default: 3 },
          options: {
            type: 'object',
            properties: { detail: { type: 'boolean', default: false } },
            default: {},
          },
        },
        required: ['city'],
        additionalProperties: false,
      },
      execution: echoProps,
    });
    const ok = await t.runner.execute('weather', { city: 'Oslo' });
    expect(ok.isError, ok.error).toBe(false);
    expect(JSON.parse((ok.content[0] as { text: string }).text)).toEqual({
      city: 'Oslo',
      units: 'metric',
      days: 3,
      options: { detail: false },
    });

    const bad = await t.runner.execute('weather', { city: 'X', units: 'kelvin', days: 9, extra: 1 });
    expect(bad.isError).toBe(true);
    expect(bad.error).toBe(
      'Invalid props: props must not have property "extra"; props.city must NOT have fewer than 2 characters; ' +
        'props.units must be one of metric, imperial; props.days must be <= 7',
    );
    expect(bad.content).toEqual([{ type: 'text', text: bad.error }]);
    expect((await t.runner.execute('weather', {})).error).toBe('Invalid props: props.city is required');
    expect((await t.runner.execute('weather', 'Oslo')).error).toBe(
      'Invalid props: props must be object (got string)',
    );
  });

  it('checks formats and reads draft-07 and 2020-12 schemas by their $schema', async () => {
    await using t = await runnerFor({
      tools: [
        {
          name: 'mail',
          inputSchema: {
            type: 'object',
            properties: {
              to: { type: 'string', format: 'email' },
              at: { type: 'string', format: 'date-time' },
              site: { type: 'string', format: 'uri' },
            },
          },
          execution: echoProps,
        },
        {
          name: 'tuple-07',
          inputSchema: {
            $schema: 'http://json-schema.org/draft-07/schema#',
            type: 'object',
            properties: {
              pair: {
                type: 'array',
                items: [{ type: 'string' }, { type: 'number' }],
                additionalItems: false,
              },
            },
          },
          execution: echoProps,
        },
        {
          name: 'tuple-2020',
          inputSchema: {
            $schema: 'https://json-schema.org/draft/2020-12/schema',
            type: 'object',
            properties: {
              pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false },
            },
            $defs: { unused: { type: 'string' } },
          },
          execution: echoProps,
        },
      ],
    });
    expect(
      (
        await t.runner.execute('mail', {
          to: 'a@example.com',
          at: '2026-01-01T10:00:00Z',
          site: 'https://x.org',
        })
      ).isError,
    ).toBe(false);
    expect((await t.runner.execute('mail', { to: 'nope', at: 'yesterday', site: 'x' })).error).toBe(
      'Invalid props: props.to must match format "email"; props.at must match format "date-time"; props.site must match format "uri"',
    );
    for (const name of ['tuple-07', 'tuple-2020']) {
      expect((await t.runner.execute(name, { pair: ['a', 1] })).isError, name).toBe(false);
      const wrong = await t.runner.execute(name, { pair: [1, 'a', 3] });
      expect(wrong.error, name).toMatch(/^Invalid props: /);
      expect(wrong.error, name).toContain('props.pair.0 must be string (got number)');
      expect(wrong.error, name).toContain('props.pair.1 must be number (got string)');
      expect(wrong.error, name).toMatch(/props\.pair must NOT have more than 2 items/);
    }
  });

  it('accepts any props without an inputSchema and never changes the caller props', async () => {
    await using t = await runnerFor({
      tools: [
        { name: 'free', execution: echoProps },
        {
          name: 'defaults',
          inputSchema: { type: 'object', properties: { n: { type: 'number', default: 1 } } },
          execution: echoProps,
        },
      ],
    });
    expect((await t.runner.execute('free', { anything: [1, { deep: true }] })).content).toEqual([
      { type: 'text', text: '{"anything":[1,{"deep":true}]}' },
    ]);
    expect((await t.runner.execute('free')).content).toEqual([{ type: 'text', text: '{}' }]);
    const props = {};
    expect((await t.runner.execute('defaults', props)).content).toEqual([{ type: 'text', text: '{"n":1}' }]);
    expect(props).toEqual({});
  });
});

describe('tool runner', () => {
  it('lists enabled tools with their public fields and treats disabled tools as missing', async () => {
    const publicFields = {
      name: 'a',
      title: 'Tool A',
      description: 'does a',
      tags: ['x'],
      annotations: { readOnlyHint: true },
      inputSchema: { type: 'object' },
    };
    await using t = await runnerFor({
      tools: [
        { ...publicFields, execution: { type: 'text', text: 'a' } },
        { name: 'off', disabled: true, execution: { type: 'text', text: 'off' } },
      ],
    });
    expect(t.runner.list()).toEqual([publicFields]);
    const error = await t.runner.execute('off').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).code).toBe('TOOL_NOT_FOUND');
  });

  it('renders text tools with props, input and env, and reports template errors as results', async () => {
    await using t = await runnerFor(
      {
        tools: [
          {
            name: 'hello',
            execution: {
              type: 'text',
              text: '@foreach(n in props.names)Hi {{n}} from {{env.MCI_TEST_PLACE}}. @endforeach({{input.names.0}})',
            },
          },
          { name: 'broken', execution: { type: 'text', text: 'Hi {{props.who' } },
        ],
      },
      { env: { MCI_TEST_PLACE: 'Oslo' } },
    );
    expect((await t.runner.execute('hello', { names: ['Ann', 'Bo'] })).content).toEqual([
      { type: 'text', text: 'Hi Ann from Oslo. Hi Bo from Oslo. (Ann)' },
    ]);
    const broken = await t.runner.execute('broken');
    expect(broken.isError).toBe(true);
    expect(broken.error).toMatch(/^execution\.text: /);
  });

  it('never changes the loaded tool definitions', async () => {
    await using dir = await toolDir({
      tools: [
        {
          name: 'cli',
          inputSchema: { type: 'object', properties: { w: { type: 'string', default: 'dflt' } } },
          execution: {
            type: 'cli',
            command: 'echo',
            args: ['{{props.w}}', '{!!props.n!!}'],
            flags: { '-n': { from: 'props.flag', type: 'boolean' } },
          },
        },
        {
          name: 'http',
          execution: {
            type: 'http',
            url: 'http://127.0.0.1:9/{{props.w}}',
            headers: { X: '{{props.w}}' },
            body: { type: 'json', content: { w: '{!!props.w!!}' } },
          },
        },
      ],
    });
    const collection = await loadTools(dir.file);
    const before = structuredClone(collection.tools);
    await using runner = createToolRunner(collection);
    await runner.execute('cli', { n: 5, flag: true });
    await runner.execute('http', { w: 'x' });
    expect(collection.tools).toEqual(before);
  });

  it('cancels through the runner signal and refuses work after close', async () => {
    const controller = new AbortController();
    await using t = await runnerFor(
      {
        tools: [
          { name: 'sleep', execution: { type: 'cli', command: 'sleep', args: ['30'] } },
          { name: 'hi', execution: { type: 'text', text: 'hi' } },
        ],
      },
      { signal: controller.signal },
    );
    const pending = t.runner.execute('sleep');
    setTimeout(() => controller.abort(), 100);
    expect(await pending).toMatchObject({ isError: true, metadata: { canceled: true } });
    expect(await t.runner.execute('hi')).toMatchObject({ isError: true, metadata: { canceled: true } });
    await t.runner.close();
    expect((await t.runner.execute('hi')).error).toBe('The tool runner is closed');
  });

  it('cancels executions in flight when closed', async () => {
    await using t = await runnerForTool({
      name: 'sleep',
      execution: { type: 'cli', command: 'sleep', args: ['30'] },
    });
    const pending = t.runner.execute('sleep');
    await t.runner.close();
    expectCanceled(await pending, 'Execution canceled: the tool runner was closed');
  });
});
