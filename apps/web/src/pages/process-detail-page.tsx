import { Link } from 'wouter';
import { marksOf } from '../components/code-marks.ts';
import { CodeView } from '../components/code-view.tsx';
import { formatDateTime, formatDuration } from '../components/duration.ts';
import { ErrorText } from '../components/error-text.tsx';
import { ProcessActions } from '../components/process-actions.tsx';
import { RunView } from '../components/run-view.tsx';
import { SaveSkillForm } from '../components/save-skill-form.tsx';
import { StateBadge } from '../components/state-badge.tsx';
import { useProcess } from '../hooks/use-process.ts';

const CHAT_REF = 'chat-';

/**
 * One process: its code (the failing line marked), every run, its metadata, Kill and Run again, and
 * Save as skill (its code).
 */
export function ProcessDetailPage({ pid }: { pid: number }) {
  const { snapshot, code, runs, error } = useProcess(pid);
  if (error !== undefined && snapshot === undefined) {
    return (
      <main className="page">
        <h1>Process {pid}</h1>
        <ErrorText error={error} />
        <Link href="/processes">Back to Processes</Link>
      </main>
    );
  }
  const streamId = snapshot?.metadata?.streamId;
  // Server-hosted conversations label their processes `chat-<conversationId>`.
  const conversationId = snapshot?.ref?.startsWith(CHAT_REF)
    ? snapshot.ref.slice(CHAT_REF.length)
    : undefined;
  return (
    <main className="page page-detail">
      <header className="page-header">
        <h1>Process {pid}</h1>
        {snapshot !== undefined && (
          <>
            <StateBadge state={snapshot.state} status={snapshot.status} />
            <ProcessActions process={snapshot} />
          </>
        )}
      </header>
      {snapshot !== undefined && (
        <dl className="metadata" aria-label="Metadata">
          <dt>Run</dt>
          <dd>
            {snapshot.run} of {snapshot.runs}
          </dd>
          {snapshot.ref !== undefined && (
            <>
              <dt>Ref</dt>
              <dd>{snapshot.ref}</dd>
            </>
          )}
          <dt>Created</dt>
          <dd>
            <time dateTime={snapshot.createdAt}>{formatDateTime(snapshot.createdAt)}</time>
          </dd>
          {snapshot.durationMs !== undefined && (
            <>
              <dt>Duration</dt>
              <dd>{formatDuration(snapshot.durationMs)}</dd>
            </>
          )}
          <dt>Limits</dt>
          <dd>
            {formatDuration(snapshot.timeoutMs)}, {snapshot.memoryLimitMb} MB
          </dd>
          {streamId !== undefined && (
            <>
              <dt>Stream</dt>
              <dd>
                <code>{streamId}</code>
                {snapshot.metadata?.intentIndex !== undefined &&
                  ` (block ${snapshot.metadata.intentIndex + 1})`}
              </dd>
            </>
          )}
          {snapshot.session !== undefined && (
            <>
              <dt>Session</dt>
              <dd>
                <Link href={`/sessions/${encodeURIComponent(snapshot.session)}`}>
                  {snapshot.session === conversationId ? "the conversation's session" : snapshot.session}
                </Link>
              </dd>
            </>
          )}
          {conversationId !== undefined && (
            <>
              <dt>Conversation</dt>
              <dd>
                <Link href={`/chat/${conversationId}`}>{conversationId}</Link>
              </dd>
            </>
          )}
        </dl>
      )}
      {code !== undefined && (
        <>
          <CodeView code={code} language={snapshot?.lang ?? 'ts'} marks={marksOf(snapshot)} />
          <SaveSkillForm code={code} />
        </>
      )}
      <h2>Runs</h2>
      {runs.length === 0 && <p className="muted">Not run yet.</p>}
      {[...runs].reverse().map((run) => (
        <RunView key={run.run} run={run} />
      ))}
    </main>
  );
}
