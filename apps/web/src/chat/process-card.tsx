import { Link } from 'wouter';
import { ErrorText } from '../components/error-text.tsx';
import { ProcessActions } from '../components/process-actions.tsx';
import { RunView } from '../components/run-view.tsx';
import { StateBadge, stateLabel } from '../components/state-badge.tsx';
import type { ProcessView } from '../hooks/use-process.ts';

/**
 * The live card under an exec block: the process's state (animated while queued, running or
 * terminating; colour and icon once idle), its latest run (outputs, logs, error, tool calls), Kill and
 * Run again; a block of a manual-run conversation waits for its Run button.
 */
export function ProcessCard({ pid, view }: { pid: number; view: ProcessView }) {
  const { snapshot, runs, error } = view;
  const latest = runs.at(-1);
  return (
    <section
      className={`process-card process-card-${snapshot === undefined ? 'loading' : stateLabel(snapshot.state, snapshot.status)}`}
      aria-label={`Process ${pid}`}
    >
      <header className="process-card-header">
        {snapshot !== undefined && <StateBadge state={snapshot.state} status={snapshot.status} />}
        <Link href={`/processes/${pid}`}>Process {pid}</Link>
        {snapshot !== undefined && snapshot.run > 0 && <span className="muted">run {snapshot.run}</span>}
        {snapshot?.state === 'idle' && snapshot.run === 0 && <span className="muted">waits for Run</span>}
        {snapshot !== undefined && <ProcessActions process={snapshot} />}
      </header>
      <ErrorText error={error} />
      {latest !== undefined && <RunView run={latest} />}
    </section>
  );
}
