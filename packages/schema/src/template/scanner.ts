/**
 * First pass of the parser: splits a template into text, placeholders and directives, with line
 * numbers, and applies the standalone-line rule (a directive alone on its line, give or take
 * spaces and tabs, takes the whole line with it, newline included), so block templates render
 * without stray blank lines. The rule is Mustache's "standalone tag" rule.
 * @see https://github.com/mustache/spec/blob/master/specs/sections.yml (standalone lines)
 */
import { skipQuoted } from './expression.ts';
import { TemplateError } from './template-error.ts';

/** The directives of the template language. */
export type DirectiveName = 'if' | 'elseif' | 'else' | 'endif' | 'for' | 'endfor' | 'foreach' | 'endforeach';

/** A piece of a template, in source order. */
export type Token =
  | { readonly kind: 'text'; value: string }
  | {
      readonly kind: 'placeholder' | 'native';
      /** What sits between the braces. */
      readonly body: string;
      readonly source: string;
      readonly line: number;
    }
  | {
      readonly kind: 'directive';
      readonly name: DirectiveName;
      /** What sits between the parentheses, for `if`, `elseif`, `for`, `foreach`. */
      readonly args: string;
      readonly source: string;
      readonly line: number;
    };

const INTERESTING = /\{\{|\{!!|@/g;
// Longest keywords first; a keyword glued to more word characters (`@format`, `@elsewhere`) is text.
const KEYWORD = /(endforeach|foreach|endfor|for|elseif|else|endif|if)(?![\w$])/y;
const WITH_ARGS: ReadonlySet<DirectiveName> = new Set(['if', 'elseif', 'for', 'foreach']);
/** The block a directive without arguments continues or closes. */
const OPENER_OF: Readonly<Partial<Record<DirectiveName, DirectiveName>>> = {
  else: 'if',
  endif: 'if',
  endfor: 'for',
  endforeach: 'foreach',
};

function isBlank(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 9) return false;
  }
  return true;
}

/** Splits `source` into tokens. Throws `TEMPLATE_SYNTAX` for unclosed placeholders and malformed directives. */
export function scan(source: string): Token[] {
  const tokens: Token[] = [];
  // The blocks opened so far and not yet closed, innermost last.
  const blocks: DirectiveName[] = [];
  let textFrom = 0;
  // End of the last placeholder or directive: one earlier on a line makes a directive inline.
  let lastTokenEnd = 0;
  // Line bookkeeping moves forward only (positions only grow), so the whole scan stays linear.
  let lineAt = 0;
  let line = 1;
  let lineStart = 0;
  const lineOf = (pos: number): number => {
    for (; lineAt < pos; lineAt++) {
      if (source.charCodeAt(lineAt) === 10) {
        line++;
        lineStart = lineAt + 1;
      }
    }
    return line;
  };
  const pushText = (to: number): void => {
    if (to <= textFrom) return;
    const value = source.slice(textFrom, to);
    const last = tokens.at(-1);
    if (last?.kind === 'text') last.value += value;
    else tokens.push({ kind: 'text', value });
  };
  const fail = (message: string, at: number, quoted: string): never => {
    throw new TemplateError('TEMPLATE_SYNTAX', message, { line: lineOf(at), placeholder: quoted });
  };

  INTERESTING.lastIndex = 0;
  for (let match = INTERESTING.exec(source); match; match = INTERESTING.exec(source)) {
    let pos = match.index;
    const lexeme = match[0];
    if (lexeme === '@') {
      const escaped = source.charCodeAt(pos + 1) === 64; // '@@if' renders '@if'
      KEYWORD.lastIndex = pos + (escaped ? 2 : 1);
      const keyword = KEYWORD.exec(source);
      if (!keyword) continue;
      const name = keyword[1] as DirectiveName;
      let end = KEYWORD.lastIndex;
      if (escaped) {
        pushText(pos);
        textFrom = pos + 1;
        INTERESTING.lastIndex = end;
        continue;
      }
      lineOf(pos);
      const atLineStart = lastTokenEnd <= lineStart && isBlank(source, lineStart, pos);
      let args = '';
      if (WITH_ARGS.has(name)) {
        let open = end;
        while (source[open] === ' ' || source[open] === '\t') open++;
        // Inside a line, a keyword without its parenthesis is text (`me@if.com`, `see @for details`).
        if (!atLineStart && (source[open] !== '(' || (name === 'elseif' && blocks.at(-1) !== 'if'))) continue;
        if (source[open] !== '(') {
          const example =
            name === 'for'
              ? '@for(i in range(0, 3))'
              : name === 'foreach'
                ? '@foreach(item in props.items)'
                : `@${name}(props.enabled)`;
          fail(`'@${name}' must be followed by parentheses, like ${example}`, pos, `@${name}`);
        }
        const close = findClosingParen(source, open);
        if (close < 0) {
          const rest = source.slice(
            pos,
            source.indexOf('\n', pos) < 0 ? undefined : source.indexOf('\n', pos),
          );
          fail(`'${rest}': the parenthesis opened by @${name}( is not closed on this line`, pos, rest);
        }
        args = source.slice(open + 1, close);
        end = close + 1;
      } else if (!atLineStart && blocks.length === 0) {
        // Inside a line, `@else` and the closers are directives only while a block is open
        // (`x@endif.io` in plain text is text).
        continue;
      }
      if (name === 'else') {
        // `@else(x)` and `@else if(x)` are almost surely a misspelt @elseif; `@else (text)` is text.
        const after = /^(?:\(|[ \t]+if[ \t]*\()/.exec(source.slice(end, end + 16));
        if (after) {
          fail(
            `'@else' takes no condition; write @elseif(condition) (to start the @else body with '(', put a space after @else)`,
            pos,
            source.slice(pos, end + after[0].length),
          );
        }
      }
      const directive: Token = {
        kind: 'directive',
        name,
        args,
        source: source.slice(pos, end),
        line: lineOf(pos),
      };
      // Standalone line: only spaces/tabs before it on its line and after it up to the newline.
      let after = end;
      while (source[after] === ' ' || source[after] === '\t') after++;
      const newline =
        source[after] === '\n' ? 1 : source[after] === '\r' && source[after + 1] === '\n' ? 2 : 0;
      if (atLineStart && (newline > 0 || after === source.length)) {
        pushText(lineStart);
        end = after + newline;
      } else {
        pushText(pos);
        // The spaces after an inline `@else` separate it from its body: `a@else b@endif` gives `b`.
        if (name === 'else') end = after;
      }
      if (name === 'if' || name === 'for' || name === 'foreach') blocks.push(name);
      else if (name !== 'else' && name !== 'elseif' && blocks.at(-1) === OPENER_OF[name]) blocks.pop();
      tokens.push(directive);
      lastTokenEnd = directive.source.length + pos;
      textFrom = end;
      INTERESTING.lastIndex = end;
      continue;
    }
    // A run of braces `{{{x}}}` is a literal `{` followed by the placeholder `{{x}}`.
    if (lexeme === '{{') while (source.charCodeAt(pos + 2) === 123) pos++;
    const native = lexeme === '{!!';
    const closer = native ? '!!}' : '}}';
    const close = findCloser(source, pos + lexeme.length, closer);
    if (close < 0) {
      const rest = source.slice(pos, source.indexOf('\n', pos) < 0 ? undefined : source.indexOf('\n', pos));
      fail(
        close === -2
          ? `'${rest}': a quote inside the placeholder is never closed (escape a quote inside a literal with a backslash: 'it\\'s')`
          : `'${rest}': the placeholder is not closed on this line (add '${closer}')`,
        pos,
        rest,
      );
    }
    pushText(pos);
    const end = close + closer.length;
    tokens.push({
      kind: native ? 'native' : 'placeholder',
      body: source.slice(pos + lexeme.length, close),
      source: source.slice(pos, end),
      line: lineOf(pos),
    });
    textFrom = end;
    lastTokenEnd = end;
    INTERESTING.lastIndex = end;
  }
  pushText(source.length);
  return tokens;
}

/**
 * Index of `closer` after `from`, skipping quoted literals; -1 when not found on the same line, -2
 * when a quote opened before it is never closed.
 */
function findCloser(source: string, from: number, closer: string): number {
  for (let i = from; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\n') return -1;
    if (c === "'" || c === '"' || c === '`') {
      const end = skipQuoted(source, i);
      if (end < 0) return -2;
      i = end - 1;
    } else if (source.startsWith(closer, i)) return i;
  }
  return -1;
}

/** Index of the `)` matching the `(` at `open`, skipping quoted literals; -1 when not on the same line. */
function findClosingParen(source: string, open: number): number {
  let depth = 0;
  for (let i = open; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\n') return -1;
    if (c === "'" || c === '"' || c === '`') {
      const end = skipQuoted(source, i);
      if (end < 0) return -1;
      i = end - 1;
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  return -1;
}
