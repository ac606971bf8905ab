import { z } from 'zod';

/**
 * Where a process is in its life: `queued` (waiting for a sandbox), `running`, `suspended` (its run
 * waits for a person to decide an approval, holding no sandbox; see docs/approvals.md), `terminating`
 * (a kill is under way) or `idle` (not running; see its {@link ProcessStatus}).
 */
export const ProcessStateSchema = z.enum(['queued', 'running', 'suspended', 'terminating', 'idle']);
/** @see ProcessStateSchema */
export type ProcessState = z.infer<typeof ProcessStateSchema>;

/** The outcome of a finished run. `null` while a process has not run yet or its run is not finished. */
export const RunStatusSchema = z.enum(['success', 'failed', 'timeout', 'canceled']);
/** @see RunStatusSchema */
export type RunStatus = z.infer<typeof RunStatusSchema>;

/** A {@link RunStatus}, or `null` (not run yet, or not finished). */
export const ProcessStatusSchema = RunStatusSchema.nullable();
/** @see ProcessStatusSchema */
export type ProcessStatus = z.infer<typeof ProcessStatusSchema>;

/** ISO 8601 timestamp (`2026-11-21T21:48:28.123Z`). */
const TimestampSchema = z.iso.datetime();

/**
 * How a server treats its check of a program before it runs (docs/sandbox.md, "Check before
 * running"): `block` ends a run whose program is certainly wrong `failed` without running it (error
 * code `CHECK_FAILED`) and passes the rest along as warnings, `warn` runs every program with all
 * findings as warnings, `off` skips the check.
 */
export const CheckModeSchema = z.enum(['block', 'warn', 'off']);
/** @see CheckModeSchema */
export type CheckMode = z.infer<typeof CheckModeSchema>;

/**
 * One finding of the check: where (1-based `line` and `column` in the submitted code), the TypeScript
 * diagnostic number (`code`, e.g. 2551) and a one-line `message` ("tools.gret does not exist. Did you
 * mean tools.greet?").
 */
export const CheckDiagnosticSchema = z.object({
  line: z.number().int().positive(),
  column: z.number().int().positive(),
  code: z.number().int(),
  message: z.string(),
});
/** @see CheckDiagnosticSchema */
export type CheckDiagnostic = z.infer<typeof CheckDiagnosticSchema>;

/**
 * Why a run failed, as reported by the sandbox. `line` and `column` (1-based) point into the submitted
 * code, not into generated wrapper code. `code` names errors the server found itself (`CHECK_FAILED`:
 * the check found what `diagnostics` lists and the program never ran).
 */
export const RunErrorSchema = z.object({
  name: z.string(),
  message: z.string(),
  line: z.number().int().positive().optional(),
  column: z.number().int().positive().optional(),
  code: z.string().optional(),
  diagnostics: z.array(CheckDiagnosticSchema).optional(),
});
/** @see RunErrorSchema */
export type RunError = z.infer<typeof RunErrorSchema>;

/** Attributes of an exec intent's info string (`timeout=5000`, `title="Load"`, bare flags -> `true`). */
export const IntentAttributesSchema = z.record(z.string(), z.union([z.string(), z.boolean()]));
/** @see IntentAttributesSchema */
export type IntentAttributes = z.infer<typeof IntentAttributesSchema>;

/**
 * Where a process came from. Processes created from a stream carry its id and the intent's index and
 * attributes; direct submissions may carry any JSON object of their own.
 */
export const ProcessMetadataSchema = z.looseObject({
  streamId: z.string().optional(),
  intentIndex: z.number().int().nonnegative().optional(),
  attributes: IntentAttributesSchema.optional(),
});
/** @see ProcessMetadataSchema */
export type ProcessMetadata = z.infer<typeof ProcessMetadataSchema>;

/** Timestamps and duration of one run (all optional: a run gets them as it goes). */
const RunTimesShape = {
  /** When the run was queued (ISO 8601). */
  queuedAt: TimestampSchema.optional(),
  /** When the run got a sandbox (ISO 8601). */
  startedAt: TimestampSchema.optional(),
  /** When the run ended (ISO 8601). */
  endedAt: TimestampSchema.optional(),
  /**
   * How long the program ran, in milliseconds: from when its isolate started it to its end (the check
   * before it and a wait for a sandbox worker are not counted).
   */
  durationMs: z.number().nonnegative().optional(),
};

/**
 * One run of a process, in full: its state and outcome, timestamps, outputs (in order), captured
 * stdout/stderr, and the error of a failed run. Runs are numbered from 1 and stay readable after later
 * runs. `truncated` is true when the sandbox dropped outputs or logs past its limits. `warnings`: what
 * the check before the run found that did not block it.
 */
export const RunSnapshotSchema = z.object({
  run: z.number().int().positive(),
  state: ProcessStateSchema,
  status: ProcessStatusSchema,
  ...RunTimesShape,
  error: RunErrorSchema.optional(),
  warnings: z.array(CheckDiagnosticSchema).optional(),
  outputs: z.array(z.unknown()),
  stdout: z.string(),
  stderr: z.string(),
  truncated: z.boolean().optional(),
});
/** @see RunSnapshotSchema */
export type RunSnapshot = z.infer<typeof RunSnapshotSchema>;

/** A run without its outputs and logs: an item of `GET /processes/:pid/runs`. */
export const RunSummarySchema = RunSnapshotSchema.omit({ outputs: true, stdout: true, stderr: true });
/** @see RunSummarySchema */
export type RunSummary = z.infer<typeof RunSummarySchema>;

/**
 * The summary of a process, sent at every state change and returned by `GET /processes/:pid`.
 * `run` is the latest run number (0 if it never ran), `runs` how many runs it has; `error`, the
 * timestamps and `durationMs` are those of the latest run. `timeoutMs` and `memoryLimitMb` are the
 * effective limits (after defaults and clamping to the server's maxima).
 */
export const ProcessSnapshotSchema = z.object({
  pid: z.number().int().positive(),
  state: ProcessStateSchema,
  status: ProcessStatusSchema,
  ref: z.string().optional(),
  lang: z.string(),
  createdAt: TimestampSchema,
  run: z.number().int().nonnegative(),
  runs: z.number().int().nonnegative(),
  timeoutMs: z.number().int().positive(),
  memoryLimitMb: z.number().int().positive(),
  /** The process's check mode, when it gave one (else the server's). */
  check: CheckModeSchema.optional(),
  error: RunErrorSchema.optional(),
  /** The latest run's check warnings. */
  warnings: z.array(CheckDiagnosticSchema).optional(),
  metadata: ProcessMetadataSchema.optional(),
  /** The session the process belongs to (docs/sessions.md); absent: none, its `state` is its own. */
  session: z.string().optional(),
  /** Ids of the approvals a `suspended` process waits for (see `ApprovalSchema`). */
  pendingApprovals: z.array(z.string()).optional(),
  ...RunTimesShape,
});
/** @see ProcessSnapshotSchema */
export type ProcessSnapshot = z.infer<typeof ProcessSnapshotSchema>;

/**
 * A process summary together with its latest run's outputs and logs: what the response pipe
 * ({@link formatResults}) renders.
 */
export const ProcessResultSchema = ProcessSnapshotSchema.extend({
  outputs: z.array(z.unknown()),
  stdout: z.string(),
  stderr: z.string(),
  truncated: z.boolean().optional(),
});
/** @see ProcessResultSchema */
export type ProcessResult = z.infer<typeof ProcessResultSchema>;
