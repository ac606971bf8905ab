import type { CheckDeclarations, CheckLanguage, CheckReport } from './check-types.ts';

/** A message to the checker's worker thread. */
export type CheckerRequest =
  | { type: 'check'; id: number; code: string; lang: CheckLanguage }
  | { type: 'declarations'; declarations: CheckDeclarations };

/** The worker's answer to one `check`, or its word that it is warm (after its start-up). */
export type CheckerReply =
  | { id: number; report: CheckReport }
  | { id: number; error: string }
  | { ready: true };
