import { lazy } from 'react';
import type { ToolInfo } from '../hooks/use-tools.ts';
import { CodeView } from './code-view.tsx';
import { ToolForm } from './tool-form.tsx';

// Markdown rendering is loaded with the first description shown, not with the console. The caller
// holds the Suspense boundary, so a list of cards appears once, with its markdown, and nothing moves
// under a pointer afterwards.
const ToolMarkdown = lazy(() => import('./tool-markdown.tsx'));

/**
 * One tool: its name and title, its description (markdown), tags, annotations, its TypeScript
 * declaration and a form to call it. It suspends until the markdown renderer is loaded: render it
 * inside a `Suspense` boundary.
 */
export function ToolCard({ tool, declaration }: { tool: ToolInfo; declaration: string | undefined }) {
  const annotations = Object.entries(tool.annotations ?? {});
  return (
    <article className="tool-card" aria-labelledby={`tool-${tool.name}`}>
      <h2>
        <code id={`tool-${tool.name}`}>{tool.name}</code>
        {tool.title !== undefined && (
          <>
            {' '}
            <span className="tool-title">{tool.title}</span>
          </>
        )}
        {tool.decision !== undefined && tool.decision !== 'allow' && (
          <span
            className={`decision decision-${tool.decision}`}
            title={tool.rule === undefined ? 'the default policy' : `policy rule ${tool.rule + 1}`}
          >
            {tool.decision === 'ask' ? 'asks first' : 'denied'}
          </span>
        )}
      </h2>
      {tool.description !== undefined && <ToolMarkdown text={tool.description} />}
      {(tool.tags?.length ?? 0) > 0 && (
        <ul className="tags" aria-label="Tags">
          {tool.tags!.map((tag) => (
            <li key={tag} className="tag">
              {tag}
            </li>
          ))}
        </ul>
      )}
      {(tool.secrets?.length ?? 0) > 0 && (
        <p className="secrets">
          Uses the secrets{' '}
          {tool.secrets!.map(({ name, set }, index) => (
            <span key={name}>
              {index > 0 && ', '}
              <code>{name}</code>
              {!set && <span className="secret-unset"> (not set)</span>}
            </span>
          ))}
          : the server adds them, the program never sees their values.
        </p>
      )}
      {annotations.length > 0 && (
        <dl className="annotations" aria-label="Annotations">
          {annotations.map(([key, value]) => (
            <div key={key}>
              <dt>{key}</dt>
              <dd>{JSON.stringify(value)}</dd>
            </div>
          ))}
        </dl>
      )}
      <details>
        <summary>TypeScript declaration</summary>
        {declaration !== undefined && (
          <CodeView code={declaration} language="tsx" label={`Declaration of ${tool.name}`} />
        )}
      </details>
      <details>
        <summary>Try it</summary>
        <ToolForm tool={tool} />
      </details>
    </article>
  );
}
