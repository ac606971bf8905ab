import type { Condition, Operand, TemplateNode } from './ast.ts';
import { parseTemplate } from './cache.ts';

/**
 * Names of the environment variables a template references, in order of first appearance, each
 * once: `env.X` in placeholders (every fallback alternative), JSON-native placeholders, conditions,
 * `@foreach` collections and `@for` bounds. Used by `mci envs` to list what a tool file needs.
 *
 * @throws {TemplateError} `TEMPLATE_SYNTAX` when the template does not parse.
 */
export function collectEnvReferences(template: string): string[] {
  const names = new Set<string>();
  const operand = (o: Operand): void => {
    if (o.kind === 'path' && o.segments[0] === 'env' && o.segments[1] !== undefined) names.add(o.segments[1]);
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
          node.alternatives.forEach(operand);
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
  return [...names];
}
