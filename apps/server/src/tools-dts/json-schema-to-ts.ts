/**
 * A focused JSON Schema -> TypeScript type renderer for tool input schemas (draft-07 and 2020-12
 * keywords that shape a value: type, enum, const, properties, required, additionalProperties, items,
 * prefixItems, anyOf, oneOf, allOf, nullable, and local `$ref`s into `$defs`/`definitions`).
 * Keywords that only constrain (minLength, pattern, ...) do not change the type and go into doc text.
 * Anything it cannot express becomes `unknown`, never an error.
 */
export type JsonSchema = boolean | { [keyword: string]: unknown };

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A property key as TypeScript accepts it: bare when it is an identifier, else a JSON string. */
export function propertyKey(name: string): string {
  return IDENTIFIER.test(name) ? name : JSON.stringify(name);
}

/** Turns text into a safe JSDoc body (no comment terminator), one ` * ` line per input line. */
export function docComment(lines: string[], indent: string): string {
  const body = lines
    .flatMap((line) => line.split(/\r?\n/))
    .map((line) => line.replaceAll('*/', '*\\/').trimEnd());
  if (body.length === 0) return '';
  if (body.length === 1) return `${indent}/** ${body[0]} */\n`;
  return `${indent}/**\n${body.map((line) => `${indent} *${line ? ` ${line}` : ''}`).join('\n')}\n${indent} */\n`;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The doc lines of a schema: description, default, format and constraints worth telling a model. */
export function schemaDoc(schema: JsonSchema): string[] {
  if (!isObject(schema)) return [];
  const lines: string[] = [];
  if (typeof schema.title === 'string' && typeof schema.description !== 'string') lines.push(schema.title);
  if (typeof schema.description === 'string') lines.push(schema.description);
  const facts: string[] = [];
  for (const key of [
    'format',
    'pattern',
    'minimum',
    'maximum',
    'minLength',
    'maxLength',
    'minItems',
    'maxItems',
  ]) {
    if (schema[key] !== undefined) facts.push(`${key} ${JSON.stringify(schema[key])}`);
  }
  if (facts.length > 0) lines.push(facts.join(', '));
  if (schema.default !== undefined) lines.push(`@default ${JSON.stringify(schema.default)}`);
  if (schema.deprecated === true) lines.push('@deprecated');
  return lines;
}

interface RenderContext {
  root: JsonSchema;
  refs: Set<string>;
  depth: number;
}

/** Renders the TypeScript type of `schema`, indented for nesting at `indent`. */
export function schemaToType(schema: JsonSchema, indent = '', root: JsonSchema = schema): string {
  return render(schema, indent, { root, refs: new Set(), depth: 0 });
}

function render(schema: JsonSchema, indent: string, ctx: RenderContext): string {
  if (schema === true) return 'unknown';
  if (schema === false) return 'never';
  if (!isObject(schema) || ctx.depth > 32) return 'unknown';
  const next = { ...ctx, depth: ctx.depth + 1 };

  if (typeof schema.$ref === 'string') return renderRef(schema.$ref, indent, next);
  if ('const' in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) return union(schema.enum.map(literal));

  const parts: string[] = [];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) {
      parts.push(union(options.map((option) => render(option as JsonSchema, indent, next))));
    }
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    parts.push(schema.allOf.map((part) => wrap(render(part as JsonSchema, indent, next))).join(' & '));
  }
  const own = renderOwnType(schema, indent, next);
  if (own !== undefined) parts.push(own);
  if (parts.length === 0) return 'unknown';
  const type = parts.length === 1 ? parts[0]! : parts.map(wrap).join(' & ');
  return schema.nullable === true ? union([type, 'null']) : type;
}

function renderOwnType(
  schema: Record<string, unknown>,
  indent: string,
  ctx: RenderContext,
): string | undefined {
  const declared = schema.type;
  const types = Array.isArray(declared) ? declared : typeof declared === 'string' ? [declared] : undefined;
  if (types) return union(types.map((type) => renderNamedType(String(type), schema, indent, ctx)));
  if (isObject(schema.properties) || schema.additionalProperties !== undefined) {
    return renderObject(schema, indent, ctx);
  }
  if (schema.items !== undefined || schema.prefixItems !== undefined) return renderArray(schema, indent, ctx);
  return undefined;
}

function renderNamedType(
  type: string,
  schema: Record<string, unknown>,
  indent: string,
  ctx: RenderContext,
): string {
  switch (type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return renderArray(schema, indent, ctx);
    case 'object':
      return renderObject(schema, indent, ctx);
    default:
      return 'unknown';
  }
}

function renderObject(schema: Record<string, unknown>, indent: string, ctx: RenderContext): string {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  const inner = `${indent}  `;
  let body = '';
  for (const [name, property] of Object.entries(properties)) {
    const optional = required.has(name) ? '' : '?';
    body += docComment(schemaDoc(property as JsonSchema), inner);
    body += `${inner}${propertyKey(name)}${optional}: ${render(property as JsonSchema, inner, ctx)};\n`;
  }
  const extra = schema.additionalProperties;
  if (extra !== undefined && extra !== false) {
    const valueType = extra === true ? 'unknown' : render(extra as JsonSchema, inner, ctx);
    body += `${inner}[key: string]: ${Object.keys(properties).length > 0 ? 'unknown' : valueType};\n`;
  } else if (Object.keys(properties).length === 0 && extra === undefined) {
    return 'Record<string, unknown>';
  }
  return body === '' ? '{}' : `{\n${body}${indent}}`;
}

function renderArray(schema: Record<string, unknown>, indent: string, ctx: RenderContext): string {
  const tuple = Array.isArray(schema.prefixItems)
    ? schema.prefixItems
    : Array.isArray(schema.items)
      ? schema.items
      : undefined;
  if (tuple) {
    const rest = Array.isArray(schema.items) ? schema.additionalItems : schema.items;
    const elements = tuple.map((item) => render(item as JsonSchema, indent, ctx));
    if (rest !== undefined && rest !== false)
      elements.push(`...${wrap(render(rest as JsonSchema, indent, ctx))}[]`);
    return `[${elements.join(', ')}]`;
  }
  if (schema.items === undefined) return 'unknown[]';
  return `${wrap(render(schema.items as JsonSchema, indent, ctx))}[]`;
}

function renderRef(ref: string, indent: string, ctx: RenderContext): string {
  // Only local pointers (`#/$defs/x`, `#/definitions/x`); a recursive ref ends as `unknown`.
  if (!ref.startsWith('#') || ctx.refs.has(ref)) return 'unknown';
  let target: unknown = ctx.root;
  for (const token of ref.slice(1).split('/').filter(Boolean)) {
    const key = decodeURIComponent(token).replaceAll('~1', '/').replaceAll('~0', '~');
    target = isObject(target) ? target[key] : undefined;
  }
  if (target === undefined) return 'unknown';
  return render(target as JsonSchema, indent, { ...ctx, refs: new Set([...ctx.refs, ref]) });
}

function literal(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return JSON.stringify(value);
  }
  return 'unknown';
}

function union(types: string[]): string {
  const unique = [...new Set(types)];
  if (unique.includes('unknown')) return 'unknown';
  return unique.length === 0 ? 'never' : unique.join(' | ');
}

function wrap(type: string): string {
  return /^[\w$.<>[\]"'-]+$/.test(type) || type.startsWith('{') || type.startsWith('[') ? type : `(${type})`;
}
