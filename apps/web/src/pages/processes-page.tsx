import { useState } from 'react';
import { ErrorText } from '../components/error-text.tsx';
import { ProcessFilters } from '../components/process-filters.tsx';
import { ProcessTable } from '../components/process-table.tsx';
import type { ProcessFilter } from '../hooks/process-filter.ts';
import { useProcesses } from '../hooks/use-processes.ts';

/**
 * The processes the user may see, live, newest first, with filters and Kill / Run per row; older
 * ones a page at a time ("Load older processes").
 */
export function ProcessesPage() {
  const [filter, setFilter] = useState<ProcessFilter>({});
  const { processes, total, hasMore, loadMore, ready, error } = useProcesses(filter);
  return (
    <main className="page page-processes">
      <header className="page-header">
        <h1>Processes</h1>
        <p className="muted" role="status" aria-label="Process count">
          {ready ? `${processes.length} of ${total} processes` : 'Loading…'}
        </p>
      </header>
      <ProcessFilters filter={filter} onChange={setFilter} />
      <ErrorText error={error} />
      <ProcessTable processes={processes} />
      {hasMore && (
        <button type="button" className="load-more" onClick={loadMore}>
          Load older processes
        </button>
      )}
    </main>
  );
}
