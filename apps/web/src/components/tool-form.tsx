import type { ProcessResult } from '@mci/client';
import { useId, useState } from 'react';
import { Link } from 'wouter';
import { useClient } from '../connection/connection-context.ts';
import type { ToolInfo } from '../hooks/use-tools.ts';
import { ErrorText } from './error-text.tsx';
import { fieldKind, initialText, propsFromForm } from './json-schema.ts';
import { RunView } from './run-view.tsx';

/**
 * A form generated from a tool's `inputSchema`. Submitting runs the tool once through a process
 * (`output(await tools[name](props))`) and shows the process's result.
 */
export function ToolForm({ tool }: { tool: ToolInfo }) {
  const client = useClient();
  const schema = tool.inputSchema ?? { type: 'object' };
  const properties = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  const formId = useId();
  const [texts, setTexts] = useState<Record<string, string>>(() =>
    Object.fromEntries(properties.map(([name, property]) => [name, initialText(property)])),
  );
  const [result, setResult] = useState<ProcessResult>();
  const [error, setError] = useState<string>();
  const [running, setRunning] = useState(false);

  const run = async () => {
    setError(undefined);
    setResult(undefined);
    let props: Record<string, unknown>;
    try {
      props = propsFromForm(schema, texts);
    } catch (caught) {
      setError((caught as Error).message);
      return;
    }
    setRunning(true);
    try {
      const code = `output(await tools[${JSON.stringify(tool.name)}](${JSON.stringify(props)}));\n`;
      const created = await client.createProcess(code, { ref: `console:tool:${tool.name}` });
      await client.wait(created.pid);
      setResult(await client.getResult(created.pid));
    } catch (caught) {
      setError((caught as Error).message);
    } finally {
      setRunning(false);
    }
  };

  return (
    <form
      className="tool-form"
      aria-label={`Call ${tool.name}`}
      onSubmit={(event) => {
        event.preventDefault();
        void run();
      }}
    >
      {properties.map(([name, property]) => {
        const id = `${formId}-${name}`;
        const kind = fieldKind(property);
        const text = texts[name] ?? '';
        const set = (value: string) => setTexts((previous) => ({ ...previous, [name]: value }));
        const label = (
          <span>
            {name}
            {required.has(name) && <span aria-hidden="true"> *</span>}
            {property.description !== undefined && <span className="muted"> — {property.description}</span>}
          </span>
        );
        if (kind === 'boolean')
          return (
            <label key={name} className="checkbox" htmlFor={id}>
              <input
                id={id}
                type="checkbox"
                checked={text === 'true'}
                onChange={(event) => set(String(event.target.checked))}
              />
              {label}
            </label>
          );
        return (
          <label key={name} htmlFor={id}>
            {label}
            {kind === 'enum' ? (
              <select
                id={id}
                value={text}
                required={required.has(name)}
                onChange={(event) => set(event.target.value)}
              >
                {!required.has(name) && <option value="">(none)</option>}
                {(property.enum as string[]).map((value) => (
                  <option key={value} value={value}>
                    {value}
                  </option>
                ))}
              </select>
            ) : kind === 'json' ? (
              <textarea
                id={id}
                rows={3}
                value={text}
                required={required.has(name)}
                placeholder="JSON"
                onChange={(event) => set(event.target.value)}
              />
            ) : (
              <input
                id={id}
                type={kind === 'string' ? 'text' : 'number'}
                step={kind === 'integer' ? 1 : 'any'}
                value={text}
                required={required.has(name)}
                onChange={(event) => set(event.target.value)}
              />
            )}
          </label>
        );
      })}
      <button type="submit" disabled={running}>
        {running ? 'Running…' : 'Run tool'}
      </button>
      <ErrorText error={error} />
      {result !== undefined && (
        <section className="tool-result" aria-label={`Result of ${tool.name}`}>
          <p className="muted">
            Process <Link href={`/processes/${result.pid}`}>{result.pid}</Link>
          </p>
          <RunView
            run={{
              run: result.run,
              state: result.state,
              status: result.status,
              outputs: result.outputs,
              stdout: result.stdout,
              stderr: result.stderr,
              tools: [],
              ...(result.error !== undefined && { error: result.error }),
              ...(result.durationMs !== undefined && { durationMs: result.durationMs }),
            }}
          />
        </section>
      )}
    </form>
  );
}
