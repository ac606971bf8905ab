import {
  createJsonSchemaValidator,
  type JsonSchemaDialect,
  type JsonSchemaValidator,
  jsonSchemaDialect,
} from '@mci/schema';
import type { ErrorObject, ValidateFunction } from 'ajv';

/** The outcome of validating props: the props with defaults applied, or one combined message. */
export type PropsValidation = { ok: true; props: unknown } | { ok: false; message: string };

/**
 * Validates tool props against a tool's `inputSchema` with Ajv and fills in `default` values.
 *
 * The dialect comes from the schema's `$schema`, read as the tool-file loader reads it
 * (`jsonSchemaDialect` of `@mci/schema`: draft-07 without one, 2019-09, 2020-12); a schema naming
 * another draft (04, 06), which the loader accepts unchecked, is validated as draft-07. Formats
 * (`email`, `uri`, `date-time`, ...) are checked. Compiled validators are cached per schema object,
 * so the loaded tool definitions must not change.
 *
 * @see https://modelcontextprotocol.io/specification/2025-11-25/basic#json-schema-usage
 */
export class PropsValidator {
  readonly #ajv = new Map<JsonSchemaDialect, JsonSchemaValidator>();
  readonly #compiled = new WeakMap<object, { validate: ValidateFunction; hasDefaults: boolean } | Error>();

  /**
   * Validates `props` and returns them with defaults applied. The caller's value is never changed
   * (a schema with defaults fills a deep copy). `undefined` and `null` props count as `{}`. Never
   * throws: a schema that does not compile is reported as a failure. `root` names the value in
   * messages (`props.units must be ...`). @default 'props'
   */
  validate(schema: Record<string, unknown> | undefined, props: unknown, root = 'props'): PropsValidation {
    if (props === undefined || props === null) props = {};
    if (!schema) return { ok: true, props };
    const compiled = this.#compile(schema);
    if (compiled instanceof Error) return { ok: false, message: `Invalid inputSchema: ${compiled.message}` };
    const { validate, hasDefaults } = compiled;
    // Only a schema with defaults writes into the value, so only then is a copy needed.
    const value = hasDefaults ? structuredClone(props) : props;
    if (validate(value)) return { ok: true, props: value };
    return { ok: false, message: `Invalid ${root}: ${formatErrors(validate.errors ?? [], root)}` };
  }

  #compile(schema: Record<string, unknown>) {
    let compiled = this.#compiled.get(schema);
    if (!compiled) {
      try {
        const validate = this.#ajvFor(jsonSchemaDialect(schema) ?? 'draft-07').compile(schema);
        compiled = { validate, hasDefaults: JSON.stringify(schema).includes('"default"') };
      } catch (error) {
        compiled = error instanceof Error ? error : new Error(String(error));
      }
      this.#compiled.set(schema, compiled);
    }
    return compiled;
  }

  #ajvFor(dialect: JsonSchemaDialect): JsonSchemaValidator {
    let ajv = this.#ajv.get(dialect);
    if (!ajv) {
      // addUsedSchema: false so two tools may share a `$id` without clashing; verbose for the got-type.
      ajv = createJsonSchemaValidator(dialect, { useDefaults: true, addUsedSchema: false, verbose: true });
      this.#ajv.set(dialect, ajv);
    }
    return ajv;
  }
}

/** Joins ajv errors into one readable message: `props.units must be one of metric, imperial; ...`. */
export function formatErrors(errors: readonly ErrorObject[], root = 'props'): string {
  const messages: string[] = [];
  for (const error of errors) {
    // allOf/anyOf/if produce a summary error next to the specific ones; the specific ones say more.
    if (error.keyword === 'if') continue;
    const message = formatError(error, root);
    if (!messages.includes(message)) messages.push(message);
  }
  return messages.join('; ');
}

function formatError(error: ErrorObject, root: string): string {
  const path = propsPath(error.instancePath, root);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${joinPath(path, String(params.missingProperty))} is required`;
    case 'enum':
      return `${path} must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'const':
      return `${path} must be ${JSON.stringify(params.allowedValue)}`;
    case 'additionalProperties':
      return `${path} must not have property "${String(params.additionalProperty)}"`;
    case 'unevaluatedProperties':
      return `${path} must not have property "${String(params.unevaluatedProperty)}"`;
    case 'type':
      return `${path} must be ${String(params.type)} (got ${typeName(error.data)})`;
    default:
      return `${path} ${error.message ?? `fails ${error.keyword}`}`;
  }
}

/** `/items/0/name` -> `props.items.0.name` (JSON Pointer escapes undone). */
function propsPath(instancePath: string, root: string): string {
  if (!instancePath) return root;
  const segments = instancePath
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  return [root, ...segments].join('.');
}

function joinPath(path: string, key: string): string {
  return `${path}.${key}`;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
