/** The part of JSON Schema the tool form reads. */
export interface JsonSchema {
  type?: string | string[];
  description?: string;
  title?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  items?: JsonSchema;
  [key: string]: unknown;
}

/** The kind of form control a property gets. */
export type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'json';

/** The form control for `schema`: scalars get their own input, everything else a JSON text box. */
export function fieldKind(schema: JsonSchema): FieldKind {
  if (Array.isArray(schema.enum) && schema.enum.every((value) => typeof value === 'string')) return 'enum';
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (type === 'string' || type === 'number' || type === 'integer' || type === 'boolean') return type;
  return 'json';
}

/** The form's starting text for a property: its default, else empty. */
export function initialText(schema: JsonSchema): string {
  if (schema.default === undefined) return fieldKind(schema) === 'boolean' ? 'false' : '';
  return typeof schema.default === 'string' ? schema.default : JSON.stringify(schema.default);
}

/**
 * Turns the form's texts into the tool's props: empty optional fields are left out; numbers, booleans
 * and JSON are parsed.
 * @throws Error naming the property whose text is not a number or not JSON, or a required one left empty
 */
export function propsFromForm(schema: JsonSchema, texts: Record<string, string>): Record<string, unknown> {
  const props: Record<string, unknown> = {};
  const required = new Set(schema.required ?? []);
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const text = texts[name] ?? '';
    const kind = fieldKind(property);
    if (kind === 'boolean') {
      if (text === 'true' || required.has(name) || property.default !== undefined)
        props[name] = text === 'true';
      continue;
    }
    if (text.trim() === '') {
      if (required.has(name)) throw new Error(`${name} is required`);
      continue;
    }
    if (kind === 'number' || kind === 'integer') {
      const value = Number(text);
      if (!Number.isFinite(value) || (kind === 'integer' && !Number.isInteger(value)))
        throw new Error(`${name} must be ${kind === 'integer' ? 'an integer' : 'a number'}`);
      props[name] = value;
    } else if (kind === 'json') {
      try {
        props[name] = JSON.parse(text);
      } catch {
        throw new Error(`${name} must be JSON`);
      }
    } else props[name] = text;
  }
  return props;
}
