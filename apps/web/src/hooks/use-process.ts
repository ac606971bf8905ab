import type { ProcessSnapshot, ServerEvent } from '@mci/client';
import { useEffect, useState } from 'react';
import { useClient } from '../connection/connection-context.ts';
import { readCalls } from './read-calls.ts';
import { applyRunEvent, emptyRun, type RunRecord } from './run-record.ts';

/** What {@link useProcess} returns. */
export interface ProcessView {
  snapshot: ProcessSnapshot | undefined;
  code: string | undefined;
  /** Every run, oldest first (index 0 is run 1). */
  runs: RunRecord[];
  /** `NOT_FOUND` (or another reason) when the process cannot be read. */
  error: string | undefined;
}

/**
 * One process, live: its snapshot, code and every run (outputs, logs, tool calls, error). It
 * subscribes with `since: 0`, so the stored history replays first and live events follow; a finished
 * run is then read in full from the server (`GET /processes/:pid/runs/:n` and its `calls`), which has
 * the final word.
 */
export function useProcess(pid: number | undefined): ProcessView {
  const client = useClient();
  const [snapshot, setSnapshot] = useState<ProcessSnapshot>();
  const [code, setCode] = useState<string>();
  const [runs, setRuns] = useState<RunRecord[]>([]);
  const [error, setError] = useState<string>();

  useEffect(() => {
    setSnapshot(undefined);
    setCode(undefined);
    setRuns([]);
    setError(undefined);
    if (pid === undefined) return;
    let active = true;
    const fail = (caught: Error) => active && setError(caught.message);
    const updateRun = (run: number, update: (record: RunRecord) => RunRecord) =>
      setRuns((previous) => {
        const next = [...previous];
        for (let n = next.length + 1; n <= run; n++) next.push(emptyRun(n));
        next[run - 1] = update(next[run - 1]!);
        return next;
      });
    const loadRun = (run: number) => {
      void client
        .getRun(pid, run)
        .then((full) => active && updateRun(run, (record) => ({ ...record, ...full })))
        .catch(fail);
      // The calls come apart: a run shows even when its calls cannot be read.
      void readCalls(client, pid, run)
        .then((calls) => active && updateRun(run, (record) => ({ ...record, calls })))
        .catch(() => {});
    };
    const onEvent = (event: ServerEvent) => {
      if (!('pid' in event) || event.pid !== pid || !('run' in event)) return;
      if (event.type === 'process') {
        const { type: _type, seq: _seq, ...next } = event;
        setSnapshot(next);
        if (event.run === 0) return;
        if (event.state === 'idle') loadRun(event.run);
      }
      updateRun(event.run, (record) => applyRunEvent(record, event));
    };
    const subscription = client.subscribe({ pid }, { since: 0, onEvent });
    client
      .get(pid)
      .then((current) => {
        if (!active) return;
        setSnapshot((previous) => previous ?? current);
        // Runs whose events the server no longer holds are read in full.
        const last = current.state === 'idle' ? current.run : current.run - 1;
        for (let run = 1; run <= last; run++) loadRun(run);
      })
      .catch(fail);
    client
      .getCode(pid)
      .then((text) => active && setCode(text))
      .catch(fail);
    return () => {
      active = false;
      subscription.close();
    };
  }, [client, pid]);

  return { snapshot, code, runs, error };
}
