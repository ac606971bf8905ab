import {
  createJsonSchemaValidator,
  type JsonSchemaDialect,
  type JsonSchemaValidator,
  jsonSchemaDialect,
} from './json-schema-validator.ts';
import type { InputSchema } from './tool-schema.ts';

/** One problem of an `inputSchema`: `pointer` is a JSON pointer inside it (`''` for the root). */
export interface InputSchemaProblem {
  pointer: string;
  message: string;
}

// Meta-schema validation only (no compile): MCP servers' schemas may use keywords strict mode rejects.
// Built on first use: most tool files never need the 2019-09 or 2020-12 meta-schemas.
const validators = new Map<JsonSchemaDialect, JsonSchemaValidator>();

function validatorFor(schema: InputSchema): JsonSchemaValidator | undefined {
  // Other drafts (04, 06) are not loaded: their schemas are accepted unchecked.
  const dialect = jsonSchemaDialect(schema);
  if (!dialect) return undefined;
  let ajv = validators.get(dialect);
  if (!ajv) {
    ajv = createJsonSchemaValidator(dialect);
    validators.set(dialect, ajv);
  }
  return ajv;
}

/**
 * Checks a tool's `inputSchema` against its JSON Schema meta-schema (draft-07 unless `$schema` names
 * 2019-09 or 2020-12) and that it describes an object (MCP tool inputs are objects).
 * @returns The problems found; empty when the schema is fine.
 */
export function checkInputSchema(schema: InputSchema): InputSchemaProblem[] {
  const problems: InputSchemaProblem[] = [];
  if (schema.type !== undefined && schema.type !== 'object') {
    problems.push({
      pointer: '/type',
      message: `a tool's inputSchema must describe an object, not ${JSON.stringify(schema.type)}`,
    });
  }
  const ajv = validatorFor(schema);
  if (ajv && !ajv.validateSchema(schema)) {
    const seen = new Set<string>();
    // One message per location: a bad `type` also fails the meta-schema's anyOf around it.
    for (const error of ajv.errors ?? []) {
      if (seen.has(error.instancePath)) continue;
      seen.add(error.instancePath);
      const allowed =
        error.params && 'allowedValues' in error.params
          ? `: ${JSON.stringify(error.params.allowedValues)}`
          : '';
      problems.push({
        pointer: error.instancePath,
        message: `not a valid JSON Schema: ${error.message ?? 'invalid'}${allowed}`,
      });
    }
  }
  return problems;
}

/** Splits a JSON pointer (`/properties/a~1b`) into path segments (`['properties', 'a/b']`). */
export function pointerToPath(pointer: string): (string | number)[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
}
