/** Machine-readable reasons an extractor call is refused. */
export type IntentExtractorErrorCode = 'INVALID_INPUT' | 'STREAM_ENDED';

/** Thrown by `extractIntents` and intent streams when called with bad input or after `end()`. */
export class IntentExtractorError extends Error {
  override readonly name = 'IntentExtractorError';
  readonly code: IntentExtractorErrorCode;

  constructor(code: IntentExtractorErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
