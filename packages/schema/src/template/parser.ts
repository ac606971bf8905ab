/**
 * Second pass of the parser: turns the scanner's flat tokens into a tree, matching every block
 * opener with its closer. Unclosed blocks, stray closers and misplaced `@else` are syntax errors
 * with the line of the directive at fault.
 */
import type { Condition, IfBranch, TemplateNode } from './ast.ts';
import {
  checkRoots,
  parseAlternatives,
  parseCondition,
  parseForeachHead,
  parseForHead,
} from './expression.ts';
import { type DirectiveName, scan, type Token } from './scanner.ts';
import { MAX_BLOCK_DEPTH } from './limits.ts';
import { TemplateError } from './template-error.ts';

type DirectiveToken = Extract<Token, { kind: 'directive' }>;

interface Block {
  readonly opener: DirectiveToken;
  /** Where nodes go right now (the current branch's body). */
  body: TemplateNode[];
  /** `@if` only: the branches so far, and the `@else` body once seen. */
  branches: IfBranch[];
  otherwise: TemplateNode[] | undefined;
  /** Builds the block's node once its closer is seen. */
  build: (block: Block) => TemplateNode;
}

const CLOSER: Readonly<Record<string, DirectiveName>> = { if: 'endif', for: 'endfor', foreach: 'endforeach' };

function syntax(message: string, token: DirectiveToken): TemplateError {
  return new TemplateError('TEMPLATE_SYNTAX', message, { line: token.line, placeholder: token.source });
}

/** Parses `source` into a tree, without caching. Throws `TEMPLATE_SYNTAX`. */
export function parse(source: string): TemplateNode[] {
  const root: TemplateNode[] = [];
  const stack: Block[] = [];
  let nodes = root;
  // Loop variables in scope, innermost last: paths must start at one of them or at a context root.
  const vars: string[] = [];
  const condition = (args: string, site: { line: number; source: string }): Condition => {
    const parsed = parseCondition(args, site);
    checkRoots(parsed.kind === 'truthy' ? [parsed.operand] : [parsed.left, parsed.right], vars, site);
    return parsed;
  };
  for (const token of scan(source)) {
    if (token.kind === 'text') {
      nodes.push({ type: 'text', value: token.value });
      continue;
    }
    const site = { line: token.line, source: token.source };
    if (token.kind !== 'directive') {
      const alternatives = parseAlternatives(token.body, site);
      checkRoots(alternatives, vars, site);
      nodes.push({ type: token.kind, alternatives, source: token.source, line: token.line });
      continue;
    }
    const open = stack.at(-1);
    switch (token.name) {
      case 'if':
      case 'for':
      case 'foreach': {
        const block: Block = { opener: token, body: [], branches: [], otherwise: undefined, build: buildIf };
        if (token.name === 'if') {
          block.branches.push({ condition: condition(token.args, site), body: block.body, ...site });
        } else if (token.name === 'for') {
          const head = parseForHead(token.args, site);
          checkRoots([head.start, head.end], vars, site);
          vars.push(head.variable);
          block.build = (b) => ({ type: 'for', ...head, body: b.body, ...site });
        } else {
          const head = parseForeachHead(token.args, site);
          checkRoots([head.collection], vars, site);
          vars.push(head.variable);
          block.build = (b) => ({ type: 'foreach', ...head, body: b.body, ...site });
        }
        stack.push(block);
        if (stack.length > MAX_BLOCK_DEPTH) {
          throw new TemplateError(
            'TEMPLATE_LIMIT',
            `'${token.source}': blocks nest more than ${MAX_BLOCK_DEPTH} deep`,
            {
              line: token.line,
              placeholder: token.source,
            },
          );
        }
        nodes = block.body;
        break;
      }
      case 'elseif':
      case 'else': {
        if (open?.opener.name !== 'if') {
          throw syntax(
            `'@${token.name}' is not inside an @if block${open ? ` (the innermost open block is ${open.opener.source} at line ${open.opener.line})` : ''}`,
            token,
          );
        }
        if (open.otherwise) {
          throw syntax(
            `'@${token.name}' comes after @else; @else must be the last branch of the @if at line ${open.opener.line}`,
            token,
          );
        }
        open.body = [];
        if (token.name === 'else') open.otherwise = open.body;
        else open.branches.push({ condition: condition(token.args, site), body: open.body, ...site });
        nodes = open.body;
        break;
      }
      default: {
        if (!open || CLOSER[open.opener.name] !== token.name) {
          throw syntax(
            open
              ? `'@${token.name}' does not match the open block ${open.opener.source} at line ${open.opener.line}; close that one first with @${CLOSER[open.opener.name]}`
              : `'@${token.name}' closes nothing: there is no open block`,
            token,
          );
        }
        stack.pop();
        if (open.opener.name !== 'if') vars.pop();
        nodes = stack.at(-1)?.body ?? root;
        nodes.push(open.build(open));
      }
    }
  }
  const unclosed = stack.at(-1);
  if (unclosed) {
    throw syntax(
      `${unclosed.opener.source} is never closed: add @${CLOSER[unclosed.opener.name]} after its body`,
      unclosed.opener,
    );
  }
  return root;
}

function buildIf(block: Block): TemplateNode {
  return { type: 'if', branches: block.branches, otherwise: block.otherwise, line: block.opener.line };
}
