import type { Condition, Operand, TemplateNode } from './ast.ts';
import { parseTemplate } from './cache.ts';

/** One `env.X` in a template: the variable, and the rest of its fallback chain when it has one. */
interface EnvReference {
  name: string;
  /** The alternatives after `env.X` in a placeholder, as written (`'http://127.0.0.1:8787'`). */
  fallback?: string;
}

/**
 * Names of the environment variables a template references, in order of first appearance, each
 * once: `env.X` in placeholders (every fallback alternative), JSON-native placeholders, conditions,
 * `@foreach` collections and `@for` bounds. Used by `mci envs` to list what a tool file needs.
 *
 * @throws {TemplateError} `TEMPLATE_SYNTAX` when the template does not parse.
 */
export function collectEnvReferences(template: string): string[] {
  return [...new Set(envReferences(template).map(({ name }) => name))];
}

/**
 * The environment variables a template can do without, each with its default: those whose every
 * reference is a placeholder alternative followed by another (`{{env.URL | 'http://127.0.0.1:8787'}}`),
 * mapped to the rest of the first such chain as written (`'http://127.0.0.1:8787'`).
 *
 * @throws {TemplateError} `TEMPLATE_SYNTAX` when the template does not parse.
 */
export function collectEnvDefaults(template: string): Map<string, string> {
  const defaults = new Map<string, string>();
  const without = new Set<string>();
  for (const { name, fallback } of envReferences(template)) {
    if (fallback === undefined) without.add(name);
    else if (!defaults.has(name)) defaults.set(name, fallback);
  }
  for (const name of without) defaults.delete(name);
  return defaults;
}

function envReferences(template: string): EnvReference[] {
  const found: EnvReference[] = [];
  const nameOf = (o: Operand): string | undefined =>
    o.kind === 'path' && o.segments[0] === 'env' ? o.segments[1] : undefined;
  const operand = (o: Operand): void => {
    const name = nameOf(o);
    if (name !== undefined) found.push({ name });
  };
  const condition = (c: Condition): void => {
    if (c.kind === 'truthy') operand(c.operand);
    else {
      operand(c.left);
      operand(c.right);
    }
  };
  const walk = (nodes: readonly TemplateNode[]): void => {
    for (const node of nodes) {
      switch (node.type) {
        case 'placeholder':
        case 'native':
          node.alternatives.forEach((alternative, index) => {
            const name = nameOf(alternative);
            if (name === undefined) return;
            const rest = node.alternatives.slice(index + 1);
            found.push(
              rest.length === 0 ? { name } : { name, fallback: rest.map(({ text }) => text).join(' | ') },
            );
          });
          break;
        case 'for':
          operand(node.start);
          operand(node.end);
          walk(node.body);
          break;
        case 'foreach':
          operand(node.collection);
          walk(node.body);
          break;
        case 'if':
          for (const branch of node.branches) {
            condition(branch.condition);
            walk(branch.body);
          }
          if (node.otherwise) walk(node.otherwise);
          break;
      }
    }
  };
  walk(parseTemplate(template));
  return found;
}
