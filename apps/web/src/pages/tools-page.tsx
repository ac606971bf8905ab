import { Suspense, useState } from 'react';
import { ErrorText } from '../components/error-text.tsx';
import { ToolCard } from '../components/tool-card.tsx';
import { toolDeclaration, useTools } from '../hooks/use-tools.ts';

/** The tools of the server's tool file, each with its declaration and a form that calls it. */
export function ToolsPage() {
  const { tools, declarations, error } = useTools();
  const [search, setSearch] = useState('');
  const needle = search.trim().toLowerCase();
  const shown = (tools ?? []).filter(
    (tool) =>
      needle === '' ||
      tool.name.toLowerCase().includes(needle) ||
      tool.description?.toLowerCase().includes(needle) ||
      tool.tags?.some((tag) => tag.toLowerCase().includes(needle)),
  );
  return (
    <main className="page page-tools">
      <header className="page-header">
        <h1>Tools</h1>
        <label className="inline-label">
          Search tools
          <input type="search" value={search} onChange={(event) => setSearch(event.target.value)} />
        </label>
      </header>
      <ErrorText error={error} />
      {tools === undefined && error === undefined && <p className="muted">Loading…</p>}
      {tools !== undefined && tools.length === 0 && <p className="muted">The tool file has no tools.</p>}
      {/* One boundary for the list: the cards appear together, their descriptions already drawn. */}
      <Suspense fallback={<p className="muted">Loading…</p>}>
        <div className="tool-list">
          {shown.map((tool) => (
            <ToolCard
              key={tool.name}
              tool={tool}
              declaration={declarations === undefined ? undefined : toolDeclaration(declarations, tool.name)}
            />
          ))}
        </div>
      </Suspense>
    </main>
  );
}
