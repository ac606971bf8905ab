import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { CompilerOptions, IScriptSnapshot, LanguageService, LanguageServiceHost } from 'typescript';
import type { CheckDeclarations, CheckLanguage, CheckReport, SkillReport } from './check-types.ts';
import { classify } from './classify.ts';
import { skillShape } from './skill-module.ts';
import { ts } from './typescript.ts';

/** The submitted code runs as the body of an async function: the check reads it the same way. */
const PREFIX = 'async function __mci_program__() {\n';
const SUFFIX = '\n}\n';

const DECLARATIONS = '/mci/sandbox.d.ts';
const PROGRAM_TS = '/mci/program.ts';
const PROGRAM_JS = '/mci/program.js';
/** Declarations of one principal (its skills), beside the server's. */
const PRINCIPAL_DECLARATIONS = '/mci/principal.d.ts';
const SKILL_TS = '/mci/skill.ts';

/**
 * The sandbox runs V8's current JavaScript without DOM or Node APIs: `esnext` declares what V8 has,
 * and the sandbox's own globals come from the declarations. Implicit `any` and `any` in `catch` are
 * allowed because programs are scripts a model writes; everything else is strict.
 */
const OPTIONS: CompilerOptions = {
  target: ts.ScriptTarget.ESNext,
  lib: ['lib.esnext.d.ts'],
  types: [],
  strict: true,
  noImplicitAny: false,
  useUnknownInCatchVariables: false,
  allowJs: true,
  checkJs: true,
  noEmit: true,
  skipLibCheck: true,
  isolatedModules: false,
  noResolve: true,
};

/**
 * A warm TypeScript language service that checks programs against the sandbox's declarations. The
 * declarations and the standard library are parsed once and kept; each check replaces the program
 * file only. Synchronous and CPU-bound: run it off the main thread ({@link createChecker}).
 */
export class ProgramChecker {
  readonly #files = new Map<string, { version: number; text: string }>();
  readonly #libDir = dirname(ts.getDefaultLibFilePath(OPTIONS));
  readonly #libCache = new Map<string, IScriptSnapshot | undefined>();
  readonly #service: LanguageService;
  #declarations: CheckDeclarations = { dts: '', tools: [] };
  #closedTools = new Set<string>();
  #toolNames = new Set<string>();
  #required = new Map<string, readonly string[]>();
  #version = 0;

  constructor(declarations?: CheckDeclarations) {
    const host: LanguageServiceHost = {
      getCompilationSettings: () => OPTIONS,
      getScriptFileNames: () => [
        DECLARATIONS,
        ...[PRINCIPAL_DECLARATIONS, PROGRAM_TS, PROGRAM_JS, SKILL_TS].filter((f) => this.#files.has(f)),
      ],
      getScriptVersion: (file) => String(this.#files.get(file)?.version ?? 0),
      getScriptSnapshot: (file) => {
        const own = this.#files.get(file);
        if (own) return ts.ScriptSnapshot.fromString(own.text);
        return this.#lib(file);
      },
      getCurrentDirectory: () => '/mci',
      getDefaultLibFileName: () => join(this.#libDir, 'lib.esnext.d.ts'),
      fileExists: (file) => this.#files.has(file) || this.#lib(file) !== undefined,
      readFile: (file) => {
        const snapshot = this.#files.has(file) ? undefined : this.#lib(file);
        return this.#files.get(file)?.text ?? snapshot?.getText(0, snapshot.getLength());
      },
    };
    this.#service = ts.createLanguageService(host, ts.createDocumentRegistry());
    this.setDeclarations(declarations ?? this.#declarations);
  }

  /** Replaces the declarations programs are checked against (when the tool file changes). */
  setDeclarations(declarations: CheckDeclarations): void {
    this.#declarations = declarations;
    this.#closedTools = new Set(declarations.tools.filter((t) => t.closed).map((t) => t.name));
    this.#toolNames = new Set(declarations.tools.map((t) => t.name));
    this.#required = new Map(declarations.tools.map((t) => [t.name, t.required ?? []]));
    this.#write(DECLARATIONS, declarations.dts);
  }

  /** The declarations programs are checked against now. */
  get declarations(): CheckDeclarations {
    return this.#declarations;
  }

  /**
   * Checks `code` (the body of the sandbox's async function) and sorts what the compiler says.
   * `principal`: declarations of the calling principal (its skills) read beside the server's.
   */
  check(code: string, lang: CheckLanguage = 'ts', principal = ''): CheckReport {
    const started = performance.now();
    this.#setPrincipal(principal);
    const file = lang === 'js' || lang === 'javascript' ? PROGRAM_JS : PROGRAM_TS;
    const other = file === PROGRAM_TS ? PROGRAM_JS : PROGRAM_TS;
    this.#files.delete(other);
    this.#write(file, PREFIX + code + SUFFIX);
    const { report } = this.#diagnose(file, 1, code.length);
    return { ...report, durationMs: performance.now() - started };
  }

  /**
   * Checks a skill module (TypeScript with a default-exported function, see `skill-module.ts`) against
   * the declarations and `principal`'s: the compiler's findings sorted as for a program, plus the
   * module's own errors (an import, no default function, an input type without JSON Schema); when
   * there are no errors, its input schema and the JavaScript that runs it.
   */
  checkSkill(code: string, principal = ''): SkillReport {
    const started = performance.now();
    this.#setPrincipal(principal);
    this.#write(SKILL_TS, code);
    try {
      const { report, program, source } = this.#diagnose(SKILL_TS, 0, code.length);
      const durationMs = () => performance.now() - started;
      if (report.errors.length > 0 || !program || !source) return { ...report, durationMs: durationMs() };
      const shape = skillShape(program.getTypeChecker(), source, code);
      if (!shape.ok) return { ...report, errors: shape.errors, durationMs: durationMs() };
      return 'schemaError' in shape
        ? { ...report, durationMs: durationMs(), schemaError: shape.schemaError, js: shape.js }
        : { ...report, durationMs: durationMs(), inputSchema: shape.inputSchema, js: shape.js };
    } finally {
      this.#files.delete(SKILL_TS);
    }
  }

  /**
   * What the compiler says about `file`, sorted by `classify`: the user's code starts at line
   * `firstLine` of the file and is `codeLength` characters long.
   */
  #diagnose(file: string, firstLine: number, codeLength: number) {
    const syntactic = this.#service.getSyntacticDiagnostics(file);
    // Code that does not parse has nothing more worth reading: its syntax errors say it all.
    const semantic = syntactic.length > 0 ? [] : this.#service.getSemanticDiagnostics(file);
    const program = this.#service.getProgram();
    const source = program?.getSourceFile(file);
    const report = classify([...syntactic, ...semantic], {
      source,
      syntactic: new Set(syntactic),
      closedTools: this.#closedTools,
      toolNames: this.#toolNames,
      required: this.#required,
      firstLine,
      codeLength,
    });
    return { report, program, source };
  }

  #setPrincipal(text: string): void {
    if (text === '') this.#files.delete(PRINCIPAL_DECLARATIONS);
    else if (this.#files.get(PRINCIPAL_DECLARATIONS)?.text !== text)
      this.#write(PRINCIPAL_DECLARATIONS, text);
  }

  // One counter for every file: a file deleted and written again must not reuse an old version.
  #write(file: string, text: string): void {
    this.#files.set(file, { version: ++this.#version, text });
  }

  #lib(file: string): IScriptSnapshot | undefined {
    if (!file.startsWith(this.#libDir)) return undefined;
    if (!this.#libCache.has(file)) {
      let snapshot: IScriptSnapshot | undefined;
      try {
        snapshot = ts.ScriptSnapshot.fromString(readFileSync(file, 'utf8'));
      } catch {
        snapshot = undefined;
      }
      this.#libCache.set(file, snapshot);
    }
    return this.#libCache.get(file);
  }
}
