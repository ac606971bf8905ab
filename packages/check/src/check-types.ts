/**
 * How a server treats what the check finds: `block` ends a run whose program is certainly wrong
 * `failed` before it starts (its other findings are warnings), `warn` runs every program and passes
 * all findings along as warnings, `off` skips the check.
 */
export type CheckMode = 'block' | 'warn' | 'off';

/** The languages the check reads (the sandbox's names; `typescript`/`javascript` are aliases). */
export type CheckLanguage = 'ts' | 'typescript' | 'js' | 'javascript';

/**
 * One finding of the check. `line` and `column` are 1-based and point into the submitted code;
 * `code` is the TypeScript diagnostic number (`2551`); `message` is one line, written for a model
 * to act on ("tools.gret does not exist. Did you mean tools.greet?").
 */
export interface CheckDiagnostic {
  line: number;
  column: number;
  code: number;
  message: string;
}

/** What the check found in one program. */
export interface CheckReport {
  /** Findings that are certainly wrong: under `block`, the run ends `failed` without running. */
  errors: CheckDiagnostic[];
  /** Everything else the compiler said. */
  warnings: CheckDiagnostic[];
  /** Time the compiler took, in ms. */
  durationMs: number;
}

/** One tool as the check needs it: its name, and whether its input schema forbids extra properties. */
export interface CheckTool {
  name: string;
  /** The tool's input schema has `additionalProperties: false` at its top level. */
  closed: boolean;
  /** The input properties its schema requires at its top level. @default none */
  required?: readonly string[];
}

/** What programs are checked against: the sandbox's declarations and the tools they declare. */
export interface CheckDeclarations {
  /** The TypeScript declarations of the sandbox globals (`tools`, `output`, `fetch`, web APIs...). */
  dts: string;
  tools: readonly CheckTool[];
}

/**
 * What the check found in a skill module: a {@link CheckReport} (its `errors` also name an import, a
 * missing default function or an input type without JSON Schema); without errors, the input schema
 * taken from the function's first parameter and the JavaScript that runs it (the body of a function
 * of `exports` that sets `exports.default`).
 */
export interface SkillReport extends CheckReport {
  inputSchema?: Record<string, unknown>;
  /** Why no input schema was taken from the parameter type (a `Date`, a function, not an object). */
  schemaError?: CheckDiagnostic;
  js?: string;
}
