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
  return suiteToolFileDir(
    prefix,
    `schemaVersion: '1.0'\ntools:\n  - name: greet\n    execution: { type: text, text: '${text}' }\n`,
  );
}

/**
 * {@link toolFileDir} for a whole suite: the directory is removed after the suite. Call it at a
 * suite's top level (it registers an `afterAll`).
 */
export function suiteToolFileDir(prefix: string, yaml: string): { dir: string; file: string } {
  const tools = toolFileDir(prefix, yaml);
  afterAll(() => tools[Symbol.dispose]());
  return { dir: tools.dir, file: tools.file };
}

/**
 * A throwaway directory (named `PREFIX…` under the system's temp directory) holding `tools.yaml`
 * with the text `yaml`; disposing it removes the directory.
 */
export function toolFileDir(prefix: string, yaml: string): { dir: string; file: string } & Disposable {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const file = join(dir, 'tools.yaml');
  writeFileSync(file, yaml);
  return { dir, file, [Symbol.dispose]: () => rmSync(dir, { recursive: true, force: true }) };
}
