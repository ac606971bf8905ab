import { StatusChart } from '../components/status-chart.tsx';
import { sampleValue } from '../hooks/prometheus-text.ts';
import { STATUS_POLL_MS, useServerStatus } from '../hooks/use-server-status.ts';

/** Health, load and processes by status over time, from `/healthz` and `/metrics`. */
export function StatusPage() {
  const { health, samples, history, error } = useServerStatus();
  const value = (name: string, labels?: Record<string, string>) =>
    samples === undefined ? undefined : sampleValue(samples, name, labels);
  const stat = (label: string, number: number | undefined) => (
    <div className="stat" key={label}>
      <dt>{label}</dt>
      <dd>{number ?? '–'}</dd>
    </div>
  );
  return (
    <main className="page page-status">
      <header className="page-header">
        <h1>Status</h1>
        <span role="status" aria-label="Health" className={`health health-${health ?? 'unknown'}`}>
          {health ?? 'checking…'}
        </span>
      </header>
      {error !== undefined && (
        <p role="alert" className="muted">
          Metrics: {error}
        </p>
      )}
      {samples !== undefined && (
        <>
          <dl className="stats" aria-label="Load">
            {stat('Running', value('mci_processes_running'))}
            {stat('Queue length', value('mci_queue_length'))}
            {stat('Queued', value('mci_processes', { state: 'queued' }))}
            {stat('Idle', value('mci_processes', { state: 'idle' }))}
            {stat('Processes created', value('mci_processes_created_total'))}
            {stat('Runs started', value('mci_runs_started_total'))}
            {stat('Tool calls', value('mci_tool_calls_total'))}
            {stat('Tool errors', value('mci_tool_errors_total'))}
            {stat('WebSocket connections', value('mci_ws_connections'))}
          </dl>
          <h2>Processes by status</h2>
          <StatusChart history={history} />
          <p className="muted">Polled every {STATUS_POLL_MS / 1000} s.</p>
        </>
      )}
    </main>
  );
}
