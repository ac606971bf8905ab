/**
 * What went wrong while parsing or rendering a template.
 *
 * - `TEMPLATE_SYNTAX`: the template itself is malformed (unclosed placeholder or block, a directive
 *   without its parentheses, an unknown operator, a stray `@endif`...). Found when parsing, before
 *   anything renders.
 * - `TEMPLATE_UNRESOLVED`: a placeholder path, loop collection or range bound does not resolve in the
 *   context (missing prop, unset environment variable, index out of range) and no fallback applies.
 * - `TEMPLATE_TYPE`: a value has the wrong type for its use: `>`/`<` between non-numbers, a
 *   non-integer range bound, `@foreach` over something that is neither an array nor an object.
 * - `TEMPLATE_LIMIT`: a template went past one of the limits of `limits.ts`: loop iterations per
 *   render, output length, block nesting depth.
 */
export type TemplateErrorCode =
  | 'TEMPLATE_SYNTAX'
  | 'TEMPLATE_UNRESOLVED'
  | 'TEMPLATE_TYPE'
  | 'TEMPLATE_LIMIT';

/** Where a template error happened, when known. */
export interface TemplateErrorDetails {
  /** 1-based line of the template the error is on. */
  line?: number | undefined;
  /** The placeholder or directive at fault, exactly as written (`{{props.user.name}}`, `@if(x > 1)`). */
  placeholder?: string | undefined;
  /** In a structured value, the JSON path of the string at fault, like `body.content.tags[1]`. */
  path?: string | undefined;
  cause?: unknown;
}

/**
 * The one error type of the templating engine. The message is meant for a model or a person to act
 * on: it starts with where (the JSON path in a structured value, the line), quotes the placeholder
 * or directive, says what is wrong and, when it can, how to fix it (`at headers.Authorization, line
 * 1: '{{env.API_KEY}}' does not resolve: environment variable API_KEY is not set; set it, or add a
 * fallback: {{env.API_KEY | 'default'}}`).
 */
export class TemplateError extends Error {
  override name = 'TemplateError';
  readonly code: TemplateErrorCode;
  /** 1-based line of the template the error is on. */
  readonly line: number | undefined;
  /** The placeholder or directive at fault, exactly as written. */
  readonly placeholder: string | undefined;
  /** In a structured value, the JSON path of the string at fault (`body.content.tags[1]`). */
  readonly path: string | undefined;
  /** The message without its location prefix. */
  readonly reason: string;

  constructor(code: TemplateErrorCode, reason: string, details: TemplateErrorDetails = {}) {
    const { line, path } = details;
    const where = [path === undefined ? '' : `at ${path}`, line === undefined ? '' : `line ${line}`]
      .filter(Boolean)
      .join(', ');
    super(
      where ? `${where}: ${reason}` : reason,
      details.cause === undefined ? undefined : { cause: details.cause },
    );
    this.code = code;
    this.reason = reason;
    this.line = line;
    this.placeholder = details.placeholder;
    this.path = path;
  }
}
