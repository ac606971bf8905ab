import type { ProcessSnapshot } from '@mci/client';
import { useVirtualizer } from '@tanstack/react-virtual';
import { type CSSProperties, useRef } from 'react';
import { ProcessRow } from './process-row.tsx';

/** Height of one row in px (the stylesheet's `.process-row` matches it). */
const ROW_HEIGHT = 44;

/** The columns in order; each names its header and its `col-*` class (the rows use the same classes). */
const COLUMNS = ['pid', 'state', 'ref', 'run', 'created', 'duration', 'error', 'actions'] as const;

/**
 * The process table: only the rows in view are in the page, so 10,000 processes scroll smoothly. The
 * rows sit in normal flow between two paddings that stand for the rows out of view: a new process on
 * top adds one row and removes one, and leaves the others untouched.
 */
export function ProcessTable({ processes }: { processes: ProcessSnapshot[] }) {
  const scroller = useRef<HTMLTableSectionElement>(null);
  const virtualizer = useVirtualizer({
    count: processes.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 8,
    getItemKey: (index) => processes[index]!.pid,
  });
  const items = virtualizer.getVirtualItems();
  const before = items[0]?.start ?? 0;
  const after = virtualizer.getTotalSize() - (items.at(-1)?.end ?? 0);
  return (
    <table aria-label="Processes" className="process-table">
      <thead className="process-head">
        <tr className="process-row process-row-head">
          {COLUMNS.map((column) => (
            <th key={column} scope="col" className={`col-${column}`}>
              {column}
            </th>
          ))}
        </tr>
      </thead>
      <tbody
        ref={scroller}
        className="process-scroller"
        style={{ '--rows-before': `${before}px`, '--rows-after': `${after}px` } as CSSProperties}
      >
        {items.map((item) => (
          <ProcessRow key={item.key} process={processes[item.index]!} />
        ))}
      </tbody>
    </table>
  );
}
