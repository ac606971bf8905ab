import type { ProcessSnapshot } from '@mci/client';
import { memo } from 'react';
import { Link } from 'wouter';
import { formatDuration, formatTime } from './duration.ts';
import { ProcessActions } from './process-actions.tsx';
import { StateBadge } from './state-badge.tsx';

/** One row of the process table (re-rendered only when its snapshot object changes). */
export const ProcessRow = memo(function ProcessRow({
  process,
  index,
  top,
}: {
  process: ProcessSnapshot;
  index: number;
  top: number;
}) {
  return (
    <tr
      aria-rowindex={index + 2}
      className="process-row"
      data-pid={process.pid}
      data-state={process.state}
      data-run={process.run}
      style={{ transform: `translateY(${top}px)` }}
    >
      <td className="col-pid">
        <Link href={`/processes/${process.pid}`} aria-label={`Process ${process.pid}`}>
          {process.pid}
        </Link>
      </td>
      <td className="col-state">
        <StateBadge state={process.state} status={process.status} animated={false} />
      </td>
      <td className="col-ref" title={process.ref}>
        {process.ref ?? ''}
      </td>
      <td className="col-run">{process.run}</td>
      <td className="col-created">
        <time dateTime={process.createdAt}>{formatTime(process.createdAt)}</time>
      </td>
      <td className="col-duration">{formatDuration(process.durationMs)}</td>
      <td className="col-error" title={process.error?.message}>
        {process.error?.message ?? ''}
      </td>
      <td className="col-actions">
        <ProcessActions process={process} compact />
      </td>
    </tr>
  );
});
