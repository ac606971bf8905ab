import { z } from 'zod';
import { pageSchema } from './paging.ts';
import { CheckDiagnosticSchema } from './snapshot.ts';

/**
 * One saved version of a skill (docs/sessions.md, "Skills"): `inputSchema` is the JSON Schema of its
 * object input; `createdAt` ISO 8601; `createdBy` the pid of the program that saved it, if one did.
 */
export const SkillSchema = z.object({
  name: z.string(),
  version: z.number().int().positive(),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
  code: z.string(),
  createdAt: z.string(),
  createdBy: z.number().int().positive().optional(),
});
export type Skill = z.infer<typeof SkillSchema>;

/** A page of `GET /skills`, newest skill first. */
export const SkillPageSchema = pageSchema(SkillSchema);

/** What `POST /skills` saves (`inputSchema`: taken from the function's parameter type when absent). */
export const SkillSaveRequestSchema = z.object({
  name: z.string(),
  description: z.string(),
  code: z.string(),
  inputSchema: z.record(z.string(), z.unknown()).optional(),
});
export type SkillSaveRequest = z.infer<typeof SkillSaveRequestSchema>;

/** The 400 answer of a save whose code does not compile: `code` `CHECK_FAILED` and the findings. */
export const SkillCheckFailedSchema = z.object({
  code: z.literal('CHECK_FAILED'),
  error: z.string(),
  diagnostics: z.array(CheckDiagnosticSchema),
});
