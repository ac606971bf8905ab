import type { ProcessState, ProcessStatus } from '@mci/client';
import type { ReactNode } from 'react';

/** An hourglass in the text's colour, one em high. */
function HourglassIcon() {
  return (
    <svg className="badge-svg" viewBox="0 0 10 12" width="0.75em" height="0.9em" aria-hidden="true">
      <path d="M1 0.75h8M1 11.25h8" stroke="currentColor" strokeWidth="1.5" strokeLinecap="round" />
      <path d="M2 1.5h6L5 6l3 4.5H2L5 6z" fill="currentColor" />
    </svg>
  );
}

// Text symbols that every text font has (no emoji font needed); `\uFE0E` asks for the text form of
// a symbol that also has an emoji form. The hourglass has no text form: it is drawn (HourglassIcon).
const ICONS: Record<string, ReactNode> = {
  queued: '◷',
  running: '▶\uFE0E',
  suspended: '‖',
  terminating: '■',
  success: '✓',
  failed: '✗',
  timeout: <HourglassIcon />,
  canceled: '⊘',
  idle: '○',
};

/** The label of a state and status: the status once idle with a finished run, else the state. */
export function stateLabel(state: ProcessState, status: ProcessStatus): string {
  return state === 'idle' && status !== null ? status : state;
}

/**
 * A process's state as a coloured badge with an icon: queued, running and terminating are animated
 * (unless `animated` is false: the process table's many rows stay still, which keeps it responsive);
 * an idle process shows its last run's status (success, failed, timeout, canceled).
 */
export function StateBadge({
  state,
  status,
  animated = true,
}: {
  state: ProcessState;
  status: ProcessStatus;
  animated?: boolean;
}) {
  const label = stateLabel(state, status);
  return (
    <span className={`badge badge-${label}${animated ? ' badge-animated' : ''}`} data-state={label}>
      <span className="badge-icon" aria-hidden="true">
        {ICONS[label]}
      </span>
      {label}
    </span>
  );
}
