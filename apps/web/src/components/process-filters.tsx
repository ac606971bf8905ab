import type { ProcessFilter } from '../hooks/process-filter.ts';

/** The Processes page's filters: state, status, ref and text in the code. */
export function ProcessFilters({
  filter,
  onChange,
}: {
  filter: ProcessFilter;
  onChange: (filter: ProcessFilter) => void;
}) {
  const set = (patch: Partial<ProcessFilter>) => onChange({ ...filter, ...patch });
  return (
    <form className="filters" aria-label="Filters" onSubmit={(event) => event.preventDefault()}>
      <label>
        State
        <select
          aria-label="State"
          value={filter.state ?? ''}
          onChange={(event) => set({ state: (event.target.value || undefined) as ProcessFilter['state'] })}
        >
          <option value="">any</option>
          <option value="queued">queued</option>
          <option value="running">running</option>
          <option value="terminating">terminating</option>
          <option value="idle">idle</option>
        </select>
      </label>
      <label>
        Status
        <select
          aria-label="Status"
          value={filter.status ?? ''}
          onChange={(event) => set({ status: (event.target.value || undefined) as ProcessFilter['status'] })}
        >
          <option value="">any</option>
          <option value="success">success</option>
          <option value="failed">failed</option>
          <option value="timeout">timeout</option>
          <option value="canceled">canceled</option>
          <option value="none">none</option>
        </select>
      </label>
      <label>
        Ref
        <input type="text" value={filter.ref ?? ''} onChange={(event) => set({ ref: event.target.value })} />
      </label>
      <label className="filter-text">
        Text in code
        <input
          type="search"
          value={filter.text ?? ''}
          onChange={(event) => set({ text: event.target.value })}
        />
      </label>
    </form>
  );
}
