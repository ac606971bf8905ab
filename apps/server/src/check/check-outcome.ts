import type { CheckReport } from '@mci/check';
import type { CheckDiagnostic, CheckMode, RunError } from '@mci/protocol';

/** What a run does after its check: `refused` (it must not start) and the warnings it carries. */
export interface CheckOutcome {
  /** The `CHECK_FAILED` error of a program the check stopped (under `block` only). */
  refused?: RunError;
  /** The findings that did not stop it, in the order of the code. */
  warnings: CheckDiagnostic[];
}

/** The warning a run carries when its check could not be done (code 0: not the compiler's). */
export const CHECK_SKIPPED: CheckDiagnostic = {
  line: 1,
  column: 1,
  code: 0,
  message: 'the check was skipped: the checker did not answer',
};

/**
 * Applies a check mode to a report (docs/sandbox.md, "Check before running"): under `block`, errors
 * refuse the run (`CheckError`, `CHECK_FAILED`, at the first finding) and the rest are warnings;
 * under `warn`, everything is a warning. `undefined` (no report) lets the run go with
 * {@link CHECK_SKIPPED}.
 */
export function checkOutcome(mode: CheckMode, report: CheckReport | undefined): CheckOutcome {
  if (!report) return { warnings: [CHECK_SKIPPED] };
  if (mode !== 'block' || report.errors.length === 0) {
    return {
      warnings: byPosition(mode === 'warn' ? [...report.errors, ...report.warnings] : report.warnings),
    };
  }
  const count = report.errors.length;
  const first = report.errors[0]!;
  return {
    refused: {
      name: 'CheckError',
      message: `the check found ${count} error${count === 1 ? '' : 's'}; the program did not run`,
      line: first.line,
      column: first.column,
      code: 'CHECK_FAILED',
      diagnostics: report.errors,
    },
    warnings: byPosition([...report.warnings]),
  };
}

function byPosition(diagnostics: CheckDiagnostic[]): CheckDiagnostic[] {
  return diagnostics.sort((a, b) => a.line - b.line || a.column - b.column);
}
