// The checker: a warm language service in a worker thread
export { CheckError, type Checker, type CheckerOptions, createChecker } from './checker.ts';
// Checking in the calling thread (benchmarks, tools that check once)
export { ProgramChecker } from './program-checker.ts';
// What a check reads and reports
export type {
  CheckDeclarations,
  CheckDiagnostic,
  CheckLanguage,
  CheckMode,
  CheckReport,
  CheckTool,
  SkillReport,
} from './check-types.ts';
