/**
 * The parsed form of a template: a tree of nodes that `renderTemplate` walks. Parsing happens once
 * per distinct source string (see `parseTemplate`); rendering never re-reads the source.
 */

/** A literal value written in a template: `'text'`, `` `text` ``, `"text"`, `42`, `true`, `false`, `null`. */
export type LiteralValue = string | number | boolean | null;

/** A dotted path into the context: `props.items.0.name`, `env.API_KEY`, `item.value`. */
export interface PathOperand {
  readonly kind: 'path';
  /** The path split on dots; numeric segments index arrays. */
  readonly segments: readonly string[];
  /** The path as written. */
  readonly text: string;
}

/** A literal written in the template. */
export interface LiteralOperand {
  readonly kind: 'literal';
  readonly value: LiteralValue;
  /** The literal as written (with its quotes). */
  readonly text: string;
}

/** One side of a comparison, one alternative of a fallback chain, or a range bound. */
export type Operand = PathOperand | LiteralOperand;

/** The comparison operators of `@if` / `@elseif` conditions. */
export type ComparisonOperator = '==' | '!=' | '>' | '<' | '>=' | '<=';

/** A condition of `@if` / `@elseif`: a truthy check, or a comparison of two operands. */
export type Condition =
  | { readonly kind: 'truthy'; readonly operand: Operand }
  | {
      readonly kind: 'compare';
      readonly operator: ComparisonOperator;
      readonly left: Operand;
      readonly right: Operand;
    };

/** Literal text, copied to the output as is. */
export interface TextNode {
  readonly type: 'text';
  readonly value: string;
}

/**
 * `{{a | b | 'c'}}` (type `placeholder`) or `{!!a | b!!}` (type `native`): the first alternative that
 * resolves to a value other than null wins; the last one is used as is.
 */
export interface PlaceholderNode {
  readonly type: 'placeholder' | 'native';
  /** The fallback chain, left to right (one element when there is no `|`). */
  readonly alternatives: readonly Operand[];
  /** The placeholder exactly as written, braces included. */
  readonly source: string;
  /** 1-based line of the placeholder. */
  readonly line: number;
}

/** `@for(variable in range(start, end))...@endfor`: start inclusive, end exclusive. */
export interface ForNode {
  readonly type: 'for';
  readonly variable: string;
  readonly start: Operand;
  readonly end: Operand;
  readonly body: readonly TemplateNode[];
  /** The opening directive as written. */
  readonly source: string;
  readonly line: number;
}

/** `@foreach(variable in path)...@endforeach` over an array (elements) or an object (`{key, value}`). */
export interface ForeachNode {
  readonly type: 'foreach';
  readonly variable: string;
  readonly collection: PathOperand;
  readonly body: readonly TemplateNode[];
  readonly source: string;
  readonly line: number;
}

/** One `@if(...)` or `@elseif(...)` branch. */
export interface IfBranch {
  readonly condition: Condition;
  readonly body: readonly TemplateNode[];
  /** The directive as written (`@elseif(props.n > 2)`). */
  readonly source: string;
  readonly line: number;
}

/** `@if(...)...@elseif(...)...@else...@endif`: the first branch whose condition holds renders. */
export interface IfNode {
  readonly type: 'if';
  readonly branches: readonly IfBranch[];
  /** The `@else` body, if there is an `@else`. */
  readonly otherwise: readonly TemplateNode[] | undefined;
  readonly line: number;
}

/** A node of a parsed template. */
export type TemplateNode = TextNode | PlaceholderNode | ForNode | ForeachNode | IfNode;
