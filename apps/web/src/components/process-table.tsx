import type { ProcessSnapshot } from '@mci/client';
import { useVirtualizer } from '@tanstack/react-virtual';
import { type CSSProperties, useRef } from 'react';
import { ProcessRow } from './process-row.tsx';

/** Height of one row in px (the stylesheet's `.process-row` matches it). */
const ROW_HEIGHT = 44;

/** The process table: only the rows in view are in the page, so 10,000 processes scroll smoothly. */
export function ProcessTable({ processes }: { processes: ProcessSnapshot[] }) {
  const scroller = useRef<HTMLTableSectionElement>(null);
  const virtualizer = useVirtualizer({
    count: processes.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 8,
    getItemKey: (index) => processes[index]!.pid,
  });
  return (
    <table aria-label="Processes" aria-rowcount={processes.length + 1} className="process-table">
      <thead className="process-head">
        <tr aria-rowindex={1} className="process-row process-row-head">
          <th scope="col" className="col-pid">
            pid
          </th>
          <th scope="col" className="col-state">
            state
          </th>
          <th scope="col" className="col-ref">
            ref
          </th>
          <th scope="col" className="col-run">
            run
          </th>
          <th scope="col" className="col-created">
            created
          </th>
          <th scope="col" className="col-duration">
            duration
          </th>
          <th scope="col" className="col-error">
            error
          </th>
          <th scope="col" className="col-actions">
            actions
          </th>
        </tr>
      </thead>
      <tbody
        ref={scroller}
        className="process-scroller"
        style={{ '--total-height': `${virtualizer.getTotalSize()}px` } as CSSProperties}
      >
        {virtualizer.getVirtualItems().map((item) => (
          <ProcessRow key={item.key} process={processes[item.index]!} index={item.index} top={item.start} />
        ))}
      </tbody>
    </table>
  );
}
