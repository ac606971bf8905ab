/** Codes of {@link ConfigError}: a bad config file or value, or an unsafe bind. */
export type ConfigErrorCode = 'CONFIG_INVALID' | 'CONFIG_NOT_FOUND' | 'INSECURE_BIND';

/**
 * The error of server configuration (config file, environment, flags): it says what is wrong and where
 * (`file`, and the JSON `path` of the bad field, as `formatZodIssues` of `@mci/schema` writes it).
 * `mci serve` prints it and exits 2.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly code: ConfigErrorCode;
  /** The config file at fault, when the value came from one. */
  readonly file: string | undefined;
  /** JSON path of the bad field (`limits.maxCodeBytes`, `tokens[0].role`). */
  readonly path: string | undefined;

  constructor(
    code: ConfigErrorCode,
    message: string,
    options?: { file?: string; path?: string; cause?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.file = options?.file;
    this.path = options?.path;
  }
}
