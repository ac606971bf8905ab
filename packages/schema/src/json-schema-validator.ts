import { Ajv as Ajv7, type Options } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';

/** An Ajv instance of any dialect (they share Ajv's core API). */
export type JsonSchemaValidator = Ajv7 | Ajv2019 | Ajv2020;

/** The JSON Schema dialects tool schemas are read in. */
export type JsonSchemaDialect = 'draft-07' | '2019-09' | '2020-12';

/**
 * The dialect a schema is written in, from its `$schema`: draft-07 without one (MCP's default for
 * tool schemas), 2019-09 or 2020-12 when it names them; `undefined` for any other `$schema` (draft-04,
 * draft-06, an unknown URI, a non-string), which Ajv does not load.
 *
 * @see https://json-schema.org/understanding-json-schema/reference/schema#schema
 */
export function jsonSchemaDialect(schema: Record<string, unknown>): JsonSchemaDialect | undefined {
  const declared = schema.$schema;
  if (declared === undefined) return 'draft-07';
  if (typeof declared !== 'string') return undefined;
  if (declared.includes('draft-07')) return 'draft-07';
  if (declared.includes('2019-09')) return '2019-09';
  if (declared.includes('2020-12')) return '2020-12';
  return undefined;
}

/**
 * Creates the Ajv instance for `dialect`: `strict: false` (schemas in the wild carry keywords Ajv
 * does not know, like `example`), `allErrors: true`, the formats of ajv-formats (`email`, `uri`,
 * `date-time`, ...), then `options` on top. The one setup for every JSON Schema validation here: the
 * tool-file loader's meta-schema check and the props validator of `@mci/tools`.
 */
export function createJsonSchemaValidator(
  dialect: JsonSchemaDialect,
  options: Options = {},
): JsonSchemaValidator {
  const merged: Options = { strict: false, allErrors: true, ...options };
  const ajv =
    dialect === '2020-12'
      ? new Ajv2020(merged)
      : dialect === '2019-09'
        ? new Ajv2019(merged)
        : new Ajv7(merged);
  // ajv-formats is CommonJS: under NodeNext its default import is `module.exports`, whose `default`
  // is the plugin.
  formats.default(ajv);
  return ajv;
}
