import { marksOf } from '../components/code-marks.ts';
import { CodeView } from '../components/code-view.tsx';
import { useProcess } from '../hooks/use-process.ts';
import { ProcessCard } from './process-card.tsx';

/** An exec block of an answer: its code (the failing line marked) and the card of its process. */
export function ExecBlock({
  code,
  language,
  pid,
  index,
}: {
  code: string;
  language: string;
  pid: number | undefined;
  index: number;
}) {
  const view = useProcess(pid);
  return (
    <div className="exec-block">
      <CodeView code={code} language={language} label={`Block ${index + 1}`} marks={marksOf(view.snapshot)} />
      {pid === undefined ? (
        <p className="muted">Waiting for the block to end…</p>
      ) : (
        <ProcessCard pid={pid} view={view} />
      )}
    </div>
  );
}
