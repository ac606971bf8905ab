import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import type { CheckDeclarations, CheckLanguage, CheckReport } from './check-types.ts';
import { classify } from './classify.ts';

/** The submitted code runs as the body of an async function: the check reads it the same way. */
const PREFIX = 'async function __mci_program__() {\n';
const SUFFIX = '\n}\n';

const DECLARATIONS = '/mci/sandbox.d.ts';
const PROGRAM_TS = '/mci/program.ts';
const PROGRAM_JS = '/mci/program.js';

/**
 * The sandbox runs V8's current JavaScript without DOM or Node APIs: `esnext` declares what V8 has,
 * and the sandbox's own globals come from the declarations. Implicit `any` and `any` in `catch` are
 * allowed because programs are scripts a model writes; everything else is strict.
 */
const OPTIONS: ts.CompilerOptions = {
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
  readonly #libCache = new Map<string, ts.IScriptSnapshot | undefined>();
  readonly #service: ts.LanguageService;
  #declarations: CheckDeclarations = { dts: '', tools: [] };
  #closedTools = new Set<string>();
  #toolNames = new Set<string>();
  #required = new Map<string, readonly string[]>();

  constructor(declarations?: CheckDeclarations) {
    const host: ts.LanguageServiceHost = {
      getCompilationSettings: () => OPTIONS,
      getScriptFileNames: () => [DECLARATIONS, ...[PROGRAM_TS, PROGRAM_JS].filter((f) => this.#files.has(f))],
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

  /** Checks `code` (the body of the sandbox's async function) and sorts what the compiler says. */
  check(code: string, lang: CheckLanguage = 'ts'): CheckReport {
    const started = performance.now();
    const file = lang === 'js' || lang === 'javascript' ? PROGRAM_JS : PROGRAM_TS;
    const other = file === PROGRAM_TS ? PROGRAM_JS : PROGRAM_TS;
    this.#files.delete(other);
    this.#write(file, PREFIX + code + SUFFIX);
    const syntactic = this.#service.getSyntacticDiagnostics(file);
    // A program that does not parse has nothing more worth reading: its syntax errors say it all.
    const semantic = syntactic.length > 0 ? [] : this.#service.getSemanticDiagnostics(file);
    const source = this.#service.getProgram()?.getSourceFile(file);
    const report = classify([...syntactic, ...semantic], {
      source,
      syntactic: new Set(syntactic),
      closedTools: this.#closedTools,
      toolNames: this.#toolNames,
      required: this.#required,
      firstLine: 1,
      codeLength: code.length,
    });
    return { ...report, durationMs: performance.now() - started };
  }

  #write(file: string, text: string): void {
    const version = (this.#files.get(file)?.version ?? 0) + 1;
    this.#files.set(file, { version, text });
  }

  #lib(file: string): ts.IScriptSnapshot | undefined {
    if (!file.startsWith(this.#libDir)) return undefined;
    if (!this.#libCache.has(file)) {
      let snapshot: ts.IScriptSnapshot | undefined;
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
