// Public API of @mci/intent-extractor: find exec=true code blocks in model output, whole or streamed.

// Extraction: batch (remark) and streaming (incremental, same result for every chunking).
export { createIntentStream } from './create-intent-stream.ts';
export { extractIntents } from './extract-intents.ts';

// Info strings: the attribute syntax and the exec predicate.
export { isExecAttributes, isExecInfo, parseInfoString } from './info-string.ts';

// Errors.
export { IntentExtractorError } from './errors.ts';

// Types.
export type { IntentStream, IntentStreamOptions } from './create-intent-stream.ts';
export type { IntentExtractorErrorCode } from './errors.ts';
export type { ParsedInfoString } from './info-string.ts';
export type { Intent, IntentAttributes } from './intent.ts';
