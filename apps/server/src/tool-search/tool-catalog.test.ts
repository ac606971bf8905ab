import { describe, expect, it } from 'vitest';
import { createToolCatalog } from './tool-catalog.ts';

const catalog = createToolCatalog([
  {
    name: 'getWeather',
    description: 'Current conditions for a city.',
    inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    annotations: { readOnlyHint: true },
  },
  { name: 'send_mail', description: 'Sends an e-mail message.', tags: ['messaging'] },
  { name: 'list_invoices', description: 'Lists the invoices of a customer, weather permitting.' },
  {
    name: 'create_ticket',
    title: 'Open a support ticket',
    inputSchema: { type: 'object', properties: { priority: { type: 'string' } } },
  },
]);
const names = (query: string, limit = 10) => catalog.search(query, limit).map((match) => match.name);

describe('createToolCatalog', () => {
  it('ranks a match in the name above one in the description', () => {
    expect(names('weather')).toEqual(['getWeather', 'list_invoices']);
  });

  it('finds tools by title, tag, input property name, prefix and a typo', () => {
    expect(names('support')).toEqual(['create_ticket']);
    expect(names('messaging')).toEqual(['send_mail']);
    expect(names('priority')).toEqual(['create_ticket']);
    expect(names('invo')).toEqual(['list_invoices']);
    expect(names('invioces')).toEqual(['list_invoices']);
    expect(names('nothing like it')).toEqual([]);
  });

  it('returns at most limit matches, with descriptions and scores', () => {
    const [best, ...rest] = catalog.search('weather mail', 1);
    expect(rest).toEqual([]);
    expect(best).toEqual({
      name: expect.any(String),
      description: expect.any(String),
      score: expect.any(Number),
    });
  });

  it('describes a tool with its schema, annotations and declaration', () => {
    expect(catalog.describe('getWeather')).toEqual({
      name: 'getWeather',
      description: 'Current conditions for a city.',
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      annotations: { readOnlyHint: true },
      declaration:
        '/** Current conditions for a city. */\ngetWeather(props: {\n  city: string;\n}): Promise<ToolResult>;\n',
    });
    expect(catalog.describe('send_mail')?.inputSchema).toEqual({ type: 'object' });
    expect(catalog.describe('nope')).toBeUndefined();
  });
});
