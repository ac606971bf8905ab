import type { CheckDiagnostic, RunError } from '@mci/protocol';

/** A note on one line of code: an error (the run's, or the check's) or a check warning. */
export interface CodeMark {
  /** 1-based line. */
  line: number;
  note: string;
  kind: 'error' | 'warning';
}

/**
 * The marks of a run on its code: each finding of the check that stopped it (or the line of its
 * error), then the check's warnings.
 */
export function marksOf(run: { error?: RunError; warnings?: CheckDiagnostic[] } | undefined): CodeMark[] {
  if (!run) return [];
  const marks: CodeMark[] = [];
  const { error } = run;
  if (error?.diagnostics?.length) {
    for (const d of error.diagnostics)
      marks.push({ line: d.line, note: `line ${d.line}:${d.column} ${d.message}`, kind: 'error' });
  } else if (error?.line !== undefined) {
    marks.push({ line: error.line, note: `${error.name}: ${error.message}`, kind: 'error' });
  }
  for (const w of run.warnings ?? [])
    marks.push({ line: w.line, note: `warning, line ${w.line}:${w.column} ${w.message}`, kind: 'warning' });
  return marks;
}
