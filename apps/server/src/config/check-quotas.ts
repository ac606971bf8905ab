import { describeValidationIssues, formatJsonPath, formatZodIssues } from '@mci/protocol';
import { z } from 'zod';
import type { QuotaOptions } from '../processes/quota-policy.ts';
import { ConfigError } from './config-error.ts';
import { QuotasSchema } from './config-schema.ts';

/**
 * Checks the `quotas` of a server: every field a positive integer, and every id in
 * `quotas.principals` the id of a token (`local` when there are none), so a misspelt id fails at
 * start instead of leaving its principal on the default quota.
 * @param principals the principal ids of the server's tokens.
 * @throws ConfigError `CONFIG_INVALID` whose `path` names the bad field (`quotas.principals.bob`,
 * `quotas.default.runsPerMinute`).
 */
export function checkQuotas(quotas: QuotaOptions | undefined, principals: readonly string[]): void {
  if (quotas === undefined) return;
  const parsed = z.object({ quotas: QuotasSchema }).safeParse({ quotas });
  if (!parsed.success) {
    const problems = formatZodIssues(parsed.error.issues);
    throw new ConfigError('CONFIG_INVALID', describeValidationIssues(problems), {
      path: problems[0]?.path ?? 'quotas',
    });
  }
  for (const id of Object.keys(quotas.principals ?? {})) {
    if (principals.includes(id)) continue;
    const path = formatJsonPath(['quotas', 'principals', id]);
    throw new ConfigError(
      'CONFIG_INVALID',
      `${path}: no token has the principal id ${JSON.stringify(id)} (the principals are ${principals.join(', ')})`,
      { path },
    );
  }
}
