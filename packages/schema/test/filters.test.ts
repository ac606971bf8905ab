import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  createToolCollection,
  loadToolFile,
  parseFilterValue,
  parseToolFilterArgument,
  type ResolvedTool,
} from '../src/index.ts';

const dir = fileURLToPath(new URL('./fixtures/filters/', import.meta.url));
const load = (name: string) => loadToolFile(join(dir, name));
const names = (tools: readonly { name: string }[]) => tools.map((tool) => tool.name);

describe('toolset filters (schema level)', () => {
  it.each([
    ['only.yaml', ['get_weather', 'get_forecast']],
    ['except.yaml', ['get_weather', 'get_forecast']],
    ['tags.yaml', ['set_alert', 'delete_history']],
    ['withoutTags.yaml', ['set_alert', 'delete_history']],
    ['unfiltered.yaml', ['local_echo', 'get_weather', 'get_forecast', 'set_alert', 'delete_history']],
  ])('%s keeps %j (disabled tools never)', async (fixture, expected) => {
    expect(names((await load(fixture)).tools)).toEqual(expected);
  });
});

describe('ToolCollection.list filters', () => {
  it('filters by only, except, tags, withoutTags and toolsets, combined with AND', async () => {
    const collection = await load('unfiltered.yaml');
    expect(names(collection.list({ only: ['get_weather', 'local_echo', 'local_disabled'] }))).toEqual([
      'local_echo',
      'get_weather',
    ]);
    expect(names(collection.list({ except: ['get_weather', 'set_alert'] }))).toEqual([
      'local_echo',
      'get_forecast',
      'delete_history',
    ]);
    expect(names(collection.list({ tags: ['read', 'local'] }))).toEqual([
      'local_echo',
      'get_weather',
      'get_forecast',
    ]);
    expect(names(collection.list({ withoutTags: ['weather'] }))).toEqual(['local_echo', 'delete_history']);
    expect(names(collection.list({ toolsets: ['weather'] }))).toEqual([
      'get_weather',
      'get_forecast',
      'set_alert',
      'delete_history',
    ]);
    expect(
      names(collection.list({ toolsets: ['weather'], tags: ['read'], except: ['get_forecast'] })),
    ).toEqual(['get_weather']);
    expect(collection.list({ only: [] })).toEqual([]);
    expect(names(collection.list({}))).toEqual(names(collection.tools));
  });

  it('matches tags case-sensitively', async () => {
    const collection = await load('unfiltered.yaml');
    expect(names(collection.list({ tags: ['Write'] }))).toEqual(['delete_history']);
    expect(names(collection.list({ tags: ['write'] }))).toEqual(['set_alert']);
  });

  it('returns a fresh array and a frozen tools list', async () => {
    const collection = await load('unfiltered.yaml');
    const listed = collection.list();
    listed.pop();
    expect(collection.list()).toHaveLength(5);
    expect(Object.isFrozen(collection.tools)).toBe(true);
  });
});

describe('filter values', () => {
  it('splits on commas, trims items and drops empty ones', () => {
    expect(parseFilterValue(' a, b,,c ,')).toEqual(['a', 'b', 'c']);
    expect(parseFilterValue(' , ')).toEqual([]);
  });

  it('parses command-line filters', () => {
    expect(parseToolFilterArgument('only:a, b')).toEqual({ only: ['a', 'b'] });
    expect(parseToolFilterArgument('withoutTags:x')).toEqual({ withoutTags: ['x'] });
    expect(parseToolFilterArgument('toolsets:weather,github')).toEqual({ toolsets: ['weather', 'github'] });
    expect(() => parseToolFilterArgument('tags:')).toThrow('filter "tags" needs a comma-separated list');
    expect(() => parseToolFilterArgument('name:a')).toThrow(/unknown filter "name"/);
  });
});

describe('MCP hint tags in filters (mci-py spellings)', () => {
  const tool = (name: string, tags: string[]): ResolvedTool => ({
    name,
    tags,
    disabled: false,
    execution: { type: 'text', text: name },
    source: '/tools.json',
  });
  const collection = createToolCollection({
    file: '/tools.json',
    kind: 'main',
    dir: '/',
    libraryDir: '/mci',
    enableAnyPaths: false,
    directoryAllowList: [],
    mcpServers: {},
    toolsets: [],
    tools: [
      tool('ours', ['readOnly', 'idempotent']),
      tool('mci_py', ['IsReadOnly', 'IsOpenWorld', 'audience_user']),
      tool('writer', ['destructive']),
    ],
  });

  it.each([
    ['readOnly', 'IsReadOnly', ['ours', 'mci_py']],
    ['idempotent', 'IsIdempotent', ['ours']],
    ['openWorld', 'IsOpenWorld', ['mci_py']],
    ['destructive', 'IsDestructive', ['writer']],
  ])('tags:%s and tags:%s select the same tools', (ours, theirs, expected) => {
    expect(names(collection.list({ tags: [ours] }))).toEqual(expected);
    expect(names(collection.list({ tags: [theirs] }))).toEqual(expected);
    const rest = ['ours', 'mci_py', 'writer'].filter((name) => !expected.includes(name));
    expect(names(collection.list({ withoutTags: [theirs] }))).toEqual(rest);
  });

  it('selects audience_<role> tags as written, and keeps other tags case-sensitive', () => {
    expect(names(collection.list({ tags: ['audience_user'] }))).toEqual(['mci_py']);
    expect(names(collection.list({ tags: ['isreadonly'] }))).toEqual([]);
  });
});
