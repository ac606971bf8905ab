import { ProcessStateSchema, RunStatusSchema } from '@mci/protocol';
import type { ProcessFilter } from '../hooks/process-filter.ts';
import { FilterSelect } from './filter-select.tsx';

const STATES = ProcessStateSchema.options;
const STATUSES = [...RunStatusSchema.options, 'none'] as const;

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
      <FilterSelect
        label="State"
        options={STATES}
        value={filter.state}
        onChange={(state) => set({ state })}
      />
      <FilterSelect
        label="Status"
        options={STATUSES}
        value={filter.status}
        onChange={(status) => set({ status })}
      />
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
