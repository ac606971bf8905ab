import type { CliFlag, TemplateContext } from '@mci/schema';

/**
 * The flags of a cli execution, in declared order: a `boolean` flag appears (as its name) when its
 * value is truthy; a `value` flag appears as `--flag=value` when its value is present (neither null
 * nor undefined). Objects and arrays are passed as JSON.
 *
 * @param flags flag name to `{from, type}`; `from` is a dotted path into the context (`props.limit`).
 */
export function flagArguments(
  flags: Record<string, CliFlag> | undefined,
  context: TemplateContext,
): string[] {
  const argv: string[] = [];
  for (const [name, flag] of Object.entries(flags ?? {})) {
    const value = lookup(context, flag.from);
    if (flag.type === 'boolean') {
      if (value) argv.push(name);
    } else if (value !== undefined && value !== null) {
      argv.push(`${name}=${argumentText(value)}`);
    }
  }
  return argv;
}

/** An argument value as text: strings as they are, other values as JSON. */
export function argumentText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The value at a dotted path (`props.items.0.name`), own properties only; undefined when missing. */
function lookup(context: TemplateContext, path: string): unknown {
  const [root, ...rest] = path.split('.');
  let value: unknown =
    root === 'props'
      ? context.props
      : root === 'input'
        ? (context.input ?? context.props)
        : root === 'env'
          ? context.env
          : undefined;
  for (const segment of rest) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, segment)) return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}
