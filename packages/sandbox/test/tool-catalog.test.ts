import { describe, expect, it } from 'vitest';
import type { ToolCatalog, ToolDescription, ToolHost, ToolMatch } from '../src/index.ts';
import { filePool, run } from './helpers.ts';

// tools.search and tools.describe reach the host's catalog; the sandbox checks their arguments and
// never shows a run a tool its host does not list. (The server's ranked catalog has its own tests.)

const pool = filePool({ size: 1 });

/** A catalog over `names` that matches by substring; it also knows a tool no host lists. */
function catalogOf(names: string[]): ToolCatalog {
  const all = [...names, 'hidden_weather'];
  return {
    search: (query, limit): ToolMatch[] =>
      all
        .filter((name) => name.includes(query))
        .slice(0, limit)
        .map((name, i) => ({ name, description: `About ${name}`, score: 10 - i })),
    describe: (name): ToolDescription | undefined =>
      all.includes(name)
        ? {
            name,
            inputSchema: { type: 'object' },
            declaration: `${name}(props?: Record<string, unknown>): Promise<ToolResult>;\n`,
          }
        : undefined,
  };
}

function hostOf(names: string[], catalog: ToolCatalog | null = catalogOf(names)): ToolHost {
  return {
    list: () => names.map((name) => ({ name })),
    execute: async (name) => ({ isError: false, content: [{ type: 'text', text: `ran ${name}` }] }),
    ...(catalog && { catalog }),
  };
}

const caught = (call: string) =>
  `try { await ${call}; return 'resolved'; } catch (e) { return [e.name, e.message]; }`;

describe('tools.search and tools.describe in the sandbox', () => {
  const tools = hostOf(['get_weather', 'weather_alerts', 'send_mail']);

  it('answers from the catalog, about listed tools only, and stays out of Object.keys(tools)', async () => {
    const r = await run(
      pool,
      `output(await tools.search('weather', { limit: 5 }));
       output((await tools.describe('send_mail')).declaration);
       output(Object.keys(tools));`,
      { tools },
    );
    expect(r.status).toBe('success');
    expect(r.outputs).toEqual([
      [
        { name: 'get_weather', description: 'About get_weather', score: 10 },
        { name: 'weather_alerts', description: 'About weather_alerts', score: 9 },
      ],
      'send_mail(props?: Record<string, unknown>): Promise<ToolResult>;\n',
      ['get_weather', 'weather_alerts', 'send_mail'],
    ]);
    // Finding tools is not a tool call.
    expect(r.events.filter((event) => event.type === 'tool')).toEqual([]);
  });

  it.each([
    ['tools.search(42)', 'TypeError', 'tools.search: query must be a string, not number'],
    ['tools.search("  ")', 'TypeError', 'tools.search: query must not be empty'],
    [
      'tools.search("x".repeat(1001))',
      'TypeError',
      'tools.search: query must be at most 1000 characters long',
    ],
    [
      'tools.search("mail", 5)',
      'TypeError',
      'tools.search: options must be an object like { limit: 5 }, not number',
    ],
    [
      'tools.search("mail", { limit: 0 })',
      'RangeError',
      'tools.search: limit must be an integer from 1 to 100, not 0',
    ],
    [
      'tools.search("mail", { limit: 1000 })',
      'RangeError',
      'tools.search: limit must be an integer from 1 to 100, not 1000',
    ],
    [
      'tools.search("mail", { limit: 2.5 })',
      'RangeError',
      'tools.search: limit must be an integer from 1 to 100, not 2.5',
    ],
    ['tools.describe(7)', 'TypeError', 'tools.describe: name must be a string'],
  ])('rejects %s with a %s', async (call, name, message) => {
    const r = await run(pool, caught(call), { tools });
    expect(r.outputs).toEqual([[name, message]]);
  });

  it('rejects an unknown name with the closest listed names, never an unlisted one', async () => {
    const r = await run(
      pool,
      `for (const name of ['weather', 'hidden_weather']) {
         try { await tools.describe(name); } catch (e) { output([e.name, e.message]); }
       }`,
      { tools },
    );
    expect(r.outputs).toEqual([
      [
        'TypeError',
        'tools.describe: No tool is named "weather". Did you mean "get_weather", "weather_alerts"? tools.search(query) finds tools by what they do.',
      ],
      [
        'TypeError',
        'tools.describe: No tool is named "hidden_weather". tools.search(query) finds tools by what they do.',
      ],
    ]);
  });

  it('leaves the name to a tool of the tool file called search', async () => {
    const r = await run(
      pool,
      `output((await tools.search({ q: 'x' })).content[0].text);
       output((await tools.describe('search')).name);
       output(Object.keys(tools));`,
      { tools: hostOf(['search', 'send_mail']) },
    );
    expect(r.status).toBe('success');
    expect(r.outputs).toEqual(['ran search', 'search', ['search', 'send_mail']]);
    expect(r.events.filter((event) => event.type === 'tool')).toMatchObject([{ name: 'search' }]);
  });

  it('says so when the host has no catalog', async () => {
    const r = await run(pool, caught('tools.search("mail")'), { tools: hostOf(['send_mail'], null) });
    expect(r.outputs).toEqual([['Error', 'tools.search is not available: this host has no tool catalog']]);
  });
});
