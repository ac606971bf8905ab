import { z } from 'zod';

/** The only MCI schema version this package reads. */
export const SCHEMA_VERSION = '1.0';

function describeBadVersion(input: unknown): string {
  if (input === undefined) return `schemaVersion is required: add schemaVersion: "${SCHEMA_VERSION}"`;
  if (typeof input === 'number') {
    return `schemaVersion must be the string "${SCHEMA_VERSION}", not the number ${input} (in YAML an unquoted 1.0 is a number: write schemaVersion: '1.0')`;
  }
  if (typeof input === 'string')
    return `schemaVersion "${input}" is not supported: only "${SCHEMA_VERSION}" is`;
  return `schemaVersion must be the string "${SCHEMA_VERSION}", not ${input === null ? 'null' : typeof input}`;
}

/**
 * `schemaVersion`: exactly the string `"1.0"`. Any other value, including YAML's unquoted `1.0`
 * (a number), fails with a message that says which.
 */
export const SchemaVersionSchema = z.custom<typeof SCHEMA_VERSION>((value) => value === SCHEMA_VERSION, {
  error: (issue) => describeBadVersion(issue.input),
});
