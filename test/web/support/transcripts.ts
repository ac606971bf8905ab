import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/**
 * A writer of replay transcripts in a throwaway directory (named `PREFIX…`, removed after the suite;
 * call it at a suite's top level): `write(name, answers)` writes each answer as a `## assistant`
 * section, the model's answers in order, and returns the file's path.
 */
export function replayTranscripts(prefix: string): (name: string, answers: string[]) => string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return (name, answers) => {
    const file = join(dir, name);
    writeFileSync(file, answers.map((answer) => `## assistant\n\n${answer}\n`).join('\n'));
    return file;
  };
}
