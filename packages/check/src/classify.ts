import type {
  CallExpression,
  Diagnostic,
  DiagnosticMessageChain,
  Expression,
  Node,
  ObjectLiteralExpression,
  SourceFile,
} from 'typescript';
import type { CheckDiagnostic } from './check-types.ts';
import { ts } from './typescript.ts';

/** What {@link classify} needs besides the diagnostics. */
export interface ClassifyContext {
  /** The checked file (the program inside its wrapper function). */
  source: SourceFile | undefined;
  /** The diagnostics that are syntax errors. */
  syntactic: ReadonlySet<Diagnostic>;
  /** Tools whose input schema forbids extra properties. */
  closedTools: ReadonlySet<string>;
  /** Every tool on `tools`. */
  toolNames: ReadonlySet<string>;
  /** The top-level required input properties of each tool. */
  required: ReadonlyMap<string, readonly string[]>;
  /** Lines of wrapper before the submitted code. */
  firstLine: number;
  /** Length of the submitted code, in UTF-16 units. */
  codeLength: number;
}

/** TypeScript diagnostic numbers the rules below read (TypeScript's `diagnosticMessages.json`). */
const TS = {
  propertyMissingDidYouMean: 2551,
  nameMissingDidYouMean: 2552,
  propertyMissing: 2339,
  argumentNotAssignable: 2345,
  requiredPropertyMissing: 2741,
  requiredPropertiesMissing: 2739,
  requiredPropertiesMissingMore: 2740,
  argumentCount: 2554,
  excessProperty: 2353,
  excessPropertyDidYouMean: 2561,
} as const;

/** Longest message kept, in characters: a model acts on the first sentence. */
const MAX_MESSAGE = 300;

/**
 * Sorts the compiler's diagnostics of a program into errors (certainly wrong: the run must not
 * start) and warnings (everything else). Errors are syntax errors, names and properties that do not
 * exist where TypeScript suggests another (TS2551, TS2552), a tool that does not exist on `tools` (a
 * skill on `skills`), a required property missing from a tool's input, and a property a tool's input schema forbids
 * (`additionalProperties: false`).
 */
export function classify(
  diagnostics: readonly Diagnostic[],
  context: ClassifyContext,
): { errors: CheckDiagnostic[]; warnings: CheckDiagnostic[] } {
  const errors: CheckDiagnostic[] = [];
  const warnings: CheckDiagnostic[] = [];
  for (const diagnostic of diagnostics) {
    const blocking = context.syntactic.has(diagnostic)
      ? plain(diagnostic)
      : blockingMessage(diagnostic, context);
    const finding = { ...position(diagnostic, context), code: diagnostic.code };
    if (blocking !== undefined) errors.push({ ...finding, message: clip(blocking) });
    else warnings.push({ ...finding, message: clip(plain(diagnostic)) });
  }
  return { errors, warnings };
}

/** The model-facing message when `diagnostic` blocks the run, else undefined. */
function blockingMessage(diagnostic: Diagnostic, context: ClassifyContext): string | undefined {
  const node = nodeAt(diagnostic, context.source);
  const access = node && toolAccess(node.parent ?? node);
  const skill = node && skillAccess(node.parent ?? node);
  if (skill && diagnostic.code === TS.propertyMissingDidYouMean) {
    const suggestion = /Did you mean '([^']+)'\?/.exec(plain(diagnostic))?.[1];
    return `skills.${skill} does not exist.${suggestion ? ` Did you mean skills.${suggestion}?` : ''}`;
  }
  if (skill && diagnostic.code === TS.propertyMissing)
    return `skills.${skill} does not exist: no saved skill has that name.`;
  switch (diagnostic.code) {
    case TS.nameMissingDidYouMean:
      return plain(diagnostic);
    case TS.propertyMissingDidYouMean: {
      if (!access) return plain(diagnostic);
      const suggestion = /Did you mean '([^']+)'\?/.exec(plain(diagnostic))?.[1];
      return `${toolRef(access.name)} does not exist.${suggestion ? ` Did you mean ${toolRef(suggestion)}?` : ''}`;
    }
    case TS.propertyMissing:
      return access
        ? `${toolRef(access.name)} does not exist. Find tools with tools.search(query).`
        : undefined;
  }
  const call = node && toolCall(node);
  if (!call || context.toolNames.has(call.name) === false) return undefined;
  const tool = toolRef(call.name);
  switch (diagnostic.code) {
    case TS.argumentNotAssignable:
    case TS.requiredPropertyMissing:
    case TS.requiredPropertiesMissing:
    case TS.requiredPropertiesMissingMore: {
      const missing = missingProperties(diagnostic.messageText);
      return missing.length > 0
        ? `${tool}: input ${missing.length === 1 ? 'property' : 'properties'} ${missing.map((p) => `'${p}'`).join(', ')} ${missing.length === 1 ? 'is' : 'are'} required.`
        : undefined;
    }
    case TS.argumentCount:
      return call.expression.arguments.length === 0
        ? `${tool}: its input is required (${plain(diagnostic)})`
        : undefined;
    case TS.excessProperty:
    case TS.excessPropertyDidYouMean: {
      const literal = node.parent && ts.isPropertyAssignment(node.parent) ? node.parent.parent : undefined;
      if (!literal || !ts.isObjectLiteralExpression(literal) || literal !== call.expression.arguments[0])
        return undefined;
      const property = ts.isIdentifier(node) || ts.isStringLiteral(node) ? node.text : node.getText();
      const suggestion = /Did you mean to write '([^']+)'\?/.exec(plain(diagnostic))?.[1];
      const hint = suggestion ? ` Did you mean '${suggestion}'?` : '';
      if (context.closedTools.has(call.name))
        return `${tool}: input property '${property}' is not in its input schema.${hint}`;
      // TypeScript stops at the extra property; a required one missing beside it is still certain.
      const missing = missingFrom(literal, context.required.get(call.name) ?? []);
      if (missing.length === 0) return undefined;
      return `${tool}: input ${missing.length === 1 ? 'property' : 'properties'} ${missing.map((p) => `'${p}'`).join(', ')} ${missing.length === 1 ? 'is' : 'are'} required ('${property}' is not in its input schema.${hint})`;
    }
  }
  return undefined;
}

/** `tools.name` when `node` reads a tool off the global `tools` (`tools.x`, `tools['x']`). */
function toolAccess(node: Node): { name: string } | undefined {
  if (ts.isPropertyAccessExpression(node) && isToolsRoot(node.expression)) return { name: node.name.text };
  if (
    ts.isElementAccessExpression(node) &&
    isToolsRoot(node.expression) &&
    ts.isStringLiteralLike(node.argumentExpression)
  ) {
    return { name: node.argumentExpression.text };
  }
  return undefined;
}

/** The skill name when `node` reads a member of the global `skills` (`skills.x`). */
function skillAccess(node: Node): string | undefined {
  return ts.isPropertyAccessExpression(node) &&
    ts.isIdentifier(node.expression) &&
    node.expression.text === 'skills'
    ? node.name.text
    : undefined;
}

function isToolsRoot(node: Expression): boolean {
  return ts.isIdentifier(node) && node.text === 'tools';
}

/** The innermost `tools.x(...)` call around `node`, with the tool's name. */
function toolCall(node: Node): { name: string; expression: CallExpression } | undefined {
  for (let at: Node | undefined = node; at; at = at.parent) {
    if (ts.isCallExpression(at)) {
      const access = toolAccess(at.expression);
      if (access) return { name: access.name, expression: at };
    }
    if (ts.isFunctionLike(at)) return undefined;
  }
  return undefined;
}

/** Required properties an object literal does not give (none when it spreads or computes names). */
function missingFrom(literal: ObjectLiteralExpression, required: readonly string[]): string[] {
  const given = new Set<string>();
  for (const property of literal.properties) {
    if (ts.isSpreadAssignment(property)) return [];
    const name = property.name;
    if (!name || !(ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name))) return [];
    given.add(name.text);
  }
  return required.filter((name) => !given.has(name));
}

/** The properties a "missing in type" message chain names (TS2741, TS2739, TS2740). */
function missingProperties(text: string | DiagnosticMessageChain): string[] {
  const found: string[] = [];
  const visit = (chain: string | DiagnosticMessageChain) => {
    if (typeof chain === 'string') return;
    const message = chain.messageText;
    if (chain.code === TS.requiredPropertyMissing) {
      const name = /^Property '([^']+)' is missing/.exec(message)?.[1];
      if (name) found.push(name);
    } else if (
      chain.code === TS.requiredPropertiesMissing ||
      chain.code === TS.requiredPropertiesMissingMore
    ) {
      const list = /the following properties from type '.*': (.*?)(?:, and \d+ more)?\.?$/.exec(message)?.[1];
      if (list) found.push(...list.split(', '));
    }
    for (const next of chain.next ?? []) visit(next);
  };
  visit(text);
  return [...new Set(found)];
}

/** The deepest node of `source` at the diagnostic's start. */
function nodeAt(diagnostic: Diagnostic, source: SourceFile | undefined): Node | undefined {
  if (!source || diagnostic.start === undefined) return undefined;
  const start = diagnostic.start;
  let found: Node | undefined;
  const visit = (node: Node): void => {
    if (start < node.getStart(source) || start >= node.getEnd()) return;
    found = node;
    ts.forEachChild(node, visit);
  };
  ts.forEachChild(source, visit);
  return found;
}

/** The diagnostic's place in the submitted code (1-based), inside it even when it points past its end. */
function position(diagnostic: Diagnostic, context: ClassifyContext): { line: number; column: number } {
  const source = context.source ?? diagnostic.file;
  if (!source || diagnostic.start === undefined) return { line: 1, column: 1 };
  const at = source.getLineAndCharacterOfPosition(diagnostic.start);
  const last = source.getLineAndCharacterOfPosition(
    source.getPositionOfLineAndCharacter(context.firstLine, 0) + context.codeLength,
  );
  if (at.line < context.firstLine) return { line: 1, column: 1 };
  if (at.line > last.line || (at.line === last.line && at.character > last.character)) {
    return { line: last.line - context.firstLine + 1, column: last.character + 1 };
  }
  return { line: at.line - context.firstLine + 1, column: at.character + 1 };
}

/** The compiler's message: its first line, and the last line of a chain (the reason). */
function plain(diagnostic: Diagnostic): string {
  const text = diagnostic.messageText;
  if (typeof text === 'string') return text;
  let last = text;
  while (last.next?.[0]) last = last.next[0];
  return last === text ? text.messageText : `${text.messageText} ${last.messageText}`;
}

function toolRef(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? `tools.${name}` : `tools[${JSON.stringify(name)}]`;
}

function clip(message: string): string {
  const one = message.replace(/\s+/g, ' ').trim();
  return one.length > MAX_MESSAGE ? `${one.slice(0, MAX_MESSAGE - 1)}…` : one;
}
