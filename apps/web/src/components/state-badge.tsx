import type { ProcessState, ProcessStatus } from '@mci/client';

const ICONS: Record<string, string> = {
  queued: '◷',
  running: '▶',
  suspended: '‖',
  terminating: '■',
  success: '✓',
  failed: '✗',
  timeout: '⌛',
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
