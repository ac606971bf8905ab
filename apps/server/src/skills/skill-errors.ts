import type { CheckDiagnostic } from '@mci/check';
import type { ErrorBody } from '@mci/protocol';
import { ServerError } from '../processes/server-error.ts';

/**
 * A skill refused at save because its code does not compile (or has no default function, or no
 * input schema): 400 with `code` `CHECK_FAILED`, `path` `code` and the check's `diagnostics`
 * (1-based `line`/`column` into the skill's code), the first one in the message.
 */
export class SkillCheckFailed extends ServerError {
  readonly diagnostics: CheckDiagnostic[];

  constructor(diagnostics: CheckDiagnostic[]) {
    const first = diagnostics[0];
    const where = first ? ` (line ${first.line}, column ${first.column}: ${first.message})` : '';
    const count = diagnostics.length;
    super(
      'VALIDATION',
      `the skill's code has ${count} error${count === 1 ? '' : 's'}${where}; it was not saved`,
      {
        path: 'code',
      },
    );
    this.diagnostics = diagnostics;
  }

  override toJSON(): ErrorBody & { diagnostics: CheckDiagnostic[] } {
    return { ...super.toJSON(), code: 'CHECK_FAILED', diagnostics: this.diagnostics };
  }
}
