import type { CheckDeclarations, CheckLanguage, CheckReport, SkillReport } from './check-types.ts';

/** A message to the checker's worker thread. */
export type CheckerRequest =
  | { type: 'check'; id: number; code: string; lang: CheckLanguage; principal?: string }
  | { type: 'skill'; id: number; code: string; principal?: string }
  | { type: 'declarations'; declarations: CheckDeclarations };

/** The worker's answer to one `check`, or its word that it is warm (after its start-up). */
export type CheckerReply =
  | { id: number; report: CheckReport | SkillReport }
  | { id: number; error: string }
  | { ready: true };
