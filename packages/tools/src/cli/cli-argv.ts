import type { CliFlag, TemplateContext } from '@mci/schema';

/**
 * The flags of a cli execution, in declared order: a `boolean` flag appears (as its name) when its
 * value is truthy; a `value` flag appears when its value is present (neither null nor undefined), a
 * long flag as one argument `--flag=value`, a short flag as two, `-n` and `value` (as mci-py passes
 * them; `head -n=2` is an error for most tools). Objects and arrays are passed as JSON.
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
      if (isShortFlag(name)) argv.push(name, argumentText(value));
      else argv.push(`${name}=${argumentText(value)}`);
    }
  }
  return argv;
}

/** `-n` (one dash, then the flag), not `--name`. */
function isShortFlag(name: string): boolean {
  return name.startsWith('-') && !name.startsWith('--');
}

/**
 * The first templated positional argument whose text starts with `-` (a program would read it as an
 * option: `echo {{props.text}}` with `--help`), or `undefined`. An argument counts as templated when
 * its template has a placeholder and does not start with `-` itself (`--name={{x}}` is an option).
 *
 * @param templates the `args` as written; `rendered` the same after templating.
 */
export function optionLikeArgument(
  templates: readonly string[],
  rendered: readonly string[],
): { index: number; template: string; text: string } | undefined {
  for (let index = 0; index < templates.length; index++) {
    const template = templates[index]!;
    const text = rendered[index] ?? '';
    const templated = template.includes('{{') || template.includes('{!!');
    if (templated && !template.startsWith('-') && text.startsWith('-')) return { index, template, text };
  }
  return undefined;
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
