import type { RunRecord } from '../hooks/run-record.ts';
import { CallTable } from './call-table.tsx';
import { formatDuration, formatTime } from './duration.ts';
import { LogBox } from './log-box.tsx';
import { OutputView } from './output-view.tsx';
import { StateBadge } from './state-badge.tsx';

/**
 * One run of a process: state, times, outputs, stdout/stderr, the error and its calls (the tool calls
 * as they happen, then every tool call and fetch as the server's audit records it).
 */
export function RunView({ run }: { run: RunRecord }) {
  return (
    <section className="run" aria-label={`Run ${run.run}`}>
      <header className="run-header">
        <h3>Run {run.run}</h3>
        <StateBadge state={run.state} status={run.status} />
        {run.durationMs !== undefined && <span className="muted">{formatDuration(run.durationMs)}</span>}
        {run.startedAt !== undefined && (
          <time className="muted" dateTime={run.startedAt}>
            {formatTime(run.startedAt)}
          </time>
        )}
      </header>
      {run.error !== undefined && (
        <p className="run-error" role="alert">
          {run.error.name}: {run.error.message}
          {run.error.line !== undefined &&
            ` (line ${run.error.line}${run.error.column ? `:${run.error.column}` : ''})`}
        </p>
      )}
      {run.error?.diagnostics && run.error.diagnostics.length > 0 && (
        <ul className="run-diagnostics" aria-label="What the check found">
          {run.error.diagnostics.map((d) => (
            <li key={`${d.line}:${d.column}:${d.code}`}>
              line {d.line}:{d.column} {d.message}
            </li>
          ))}
        </ul>
      )}
      {run.outputs.length > 0 && (
        <div className="outputs">
          <h4>Outputs</h4>
          {run.outputs.map((value, position) => (
            <OutputView
              // biome-ignore lint/suspicious/noArrayIndexKey: outputs are positional
              key={position}
              value={value}
              index={position}
            />
          ))}
        </div>
      )}
      {run.stdout !== '' && (
        <div>
          <h4>stdout</h4>
          <LogBox text={run.stdout} stream="stdout" />
        </div>
      )}
      {run.stderr !== '' && (
        <div>
          <h4>stderr</h4>
          <LogBox text={run.stderr} stream="stderr" />
        </div>
      )}
      {run.calls !== undefined && run.calls.length > 0 ? (
        <div>
          <h4>Calls</h4>
          <CallTable run={run.run} calls={run.calls} />
        </div>
      ) : (
        run.tools.length > 0 && (
          <div>
            <h4>Tool calls</h4>
            <ul className="tool-calls">
              {run.tools.map((call) => (
                <li key={call.seq} className={call.isError ? 'tool-call tool-call-error' : 'tool-call'}>
                  <code>{call.name}</code> {formatDuration(call.durationMs)}
                  {call.isError && ' (error)'}
                </li>
              ))}
            </ul>
          </div>
        )
      )}
      {run.truncated === true && (
        <p className="muted">Some outputs or logs were dropped past the sandbox's limits.</p>
      )}
    </section>
  );
}
