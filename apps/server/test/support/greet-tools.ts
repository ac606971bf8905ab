import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/** A chat answer's code block that calls `greet` and outputs its text. */
export const GREET_BLOCK =
  '```ts exec=true\nconst r = await tools.greet();\noutput(r.content[0].text);\n```\n';

/**
 * A throwaway directory (named `PREFIX…` under the system's temp directory, removed after the
 * suite) holding `tools.yaml`: one text tool `greet` that answers `text`. Call it at a suite's top
 * level (it registers an `afterAll`).
 */
export function greetToolDir(prefix: string, text = 'hi'): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'tools.yaml');
  writeFileSync(
    file,
    `schemaVersion: '1.0'\ntools:\n  - name: greet\n    execution: { type: text, text: '${text}' }\n`,
  );
  return { dir, file };
}
