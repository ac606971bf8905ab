import { describe, expect, it } from 'vitest';
import { createJsonSchemaValidator, jsonSchemaDialect } from './index.ts';

describe('jsonSchemaDialect (the one reading of $schema, for the loader and the props validator)', () => {
  it.each([
    [undefined, 'draft-07'],
    ['http://json-schema.org/draft-07/schema#', 'draft-07'],
    ['https://json-schema.org/draft/2019-09/schema', '2019-09'],
    ['https://json-schema.org/draft/2020-12/schema', '2020-12'],
    ['http://json-schema.org/draft-06/schema#', undefined],
    ['http://json-schema.org/draft-04/schema#', undefined],
    [7, undefined],
  ])('$schema %j is %s', ($schema, dialect) => {
    expect(jsonSchemaDialect($schema === undefined ? {} : { $schema })).toBe(dialect);
  });
});

describe('createJsonSchemaValidator', () => {
  it('checks formats and reads each dialect with its own keywords', () => {
    const email = createJsonSchemaValidator('draft-07').compile({ type: 'string', format: 'email' });
    expect(email('ada@example.org')).toBe(true);
    expect(email('not an address')).toBe(false);
    const tuple = { type: 'array', prefixItems: [{ type: 'number' }], items: false };
    expect(createJsonSchemaValidator('2020-12').compile(tuple)([1, 2])).toBe(false);
    expect(createJsonSchemaValidator('2020-12').compile(tuple)([1])).toBe(true);
  });
});
