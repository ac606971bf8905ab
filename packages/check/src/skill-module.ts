import type { Node, SourceFile, TypeChecker } from 'typescript';
import type { CheckDiagnostic } from './check-types.ts';
import { typeToJsonSchema } from './input-schema.ts';
import { ts } from './typescript.ts';

/** What a skill module is found to be: its input schema and the JavaScript that runs it, or why not. */
export type SkillShape =
  | { ok: true; inputSchema: Record<string, unknown>; js: string }
  /** The module runs, but its input type has no JSON Schema: it needs one given at save. */
  | { ok: true; schemaError: CheckDiagnostic; js: string }
  | { ok: false; errors: CheckDiagnostic[] };

/**
 * Reads a skill module (TypeScript whose default export is a function taking one object input):
 * refuses `import` (the sandbox has no modules) and a missing or non-function default export, takes
 * the input schema from the function's first parameter type (`{ type: 'object' }` without one; see
 * {@link typeToJsonSchema}), and compiles the module to the body of a JavaScript function of
 * `exports` that sets `exports.default` (TypeScript's CommonJS output).
 */
export function skillShape(checker: TypeChecker, source: SourceFile, code: string): SkillShape {
  const errors: CheckDiagnostic[] = [];
  const at = (node: Node, message: string) => {
    const { line, character } = source.getLineAndCharacterOfPosition(node.getStart(source));
    errors.push({ line: line + 1, column: character + 1, code: 0, message });
  };
  const visit = (node: Node): void => {
    if (ts.isImportDeclaration(node) || ts.isImportEqualsDeclaration(node))
      at(
        node,
        'import is not available in skills (there are no modules): use the globals tools, skills, fetch',
      );
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier)
      at(node, 'export ... from is not available in skills (there are no modules)');
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
      at(node, 'import() is not available in skills (there are no modules)');
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (errors.length > 0) return { ok: false, errors };
  const moduleSymbol = checker.getSymbolAtLocation(source);
  const exported = moduleSymbol && checker.getExportsOfModule(moduleSymbol).find((s) => s.name === 'default');
  const declaration = exported?.declarations?.[0];
  if (!exported || !declaration) {
    errors.push({
      line: 1,
      column: 1,
      code: 0,
      message:
        'a skill must export a function as its default: export default async function (input: {...}) {...}',
    });
    return { ok: false, errors };
  }
  const type = checker.getTypeOfSymbolAtLocation(exported, declaration);
  const [signature] = type.getCallSignatures();
  if (!signature) {
    at(declaration, `the default export must be a function (it is ${checker.typeToString(type)})`);
    return { ok: false, errors };
  }
  const js = ts.transpileModule(code, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ESNext },
  }).outputText;
  const [parameter] = signature.getParameters();
  if (!parameter) return { ok: true, inputSchema: { type: 'object', properties: {} }, js };
  const parameterDeclaration = parameter.valueDeclaration ?? declaration;
  const problem = (message: string): SkillShape => {
    const { line, character } = source.getLineAndCharacterOfPosition(parameterDeclaration.getStart(source));
    return { ok: true, schemaError: { line: line + 1, column: character + 1, code: 0, message }, js };
  };
  let inputSchema: Record<string, unknown>;
  try {
    inputSchema = typeToJsonSchema(
      checker,
      checker.getTypeOfSymbolAtLocation(parameter, parameterDeclaration),
    );
  } catch (error) {
    return problem(`${(error as Error).message}; give inputSchema when saving instead`);
  }
  if (Object.keys(inputSchema).length === 0) inputSchema = { type: 'object' };
  if (inputSchema.type !== 'object') return problem('the input of a skill must be an object type ({ ... })');
  return { ok: true, inputSchema, js };
}
