import type { ProcessSnapshot } from '@mci/client';
import { useEffect, useMemo, useReducer, useState, useSyncExternalStore } from 'react';
import { useClient } from '../connection/connection-context.ts';
import { CodeCache } from './code-cache.ts';
import { matchesFilter, type ProcessFilter } from './process-filter.ts';
import { ProcessListStore } from './process-list-store.ts';

/** What {@link useProcesses} returns. */
export interface ProcessesView {
  /** The processes passing the filter, newest first. */
  processes: ProcessSnapshot[];
  /** How many processes are loaded (the newest pages, and every one created since). */
  total: number;
  /** Whether older processes are left to load. */
  hasMore: boolean;
  /** Loads the next page of older processes. */
  loadMore: () => void;
  /** False until the first list arrived. */
  ready: boolean;
  error: string | undefined;
}

/**
 * The processes the user may see, live, the newest page first and older ones on `loadMore` (see
 * {@link ProcessListStore}), filtered by `filter`. A text
 * filter loads the code of the processes it searches.
 */
export function useProcesses(filter: ProcessFilter): ProcessesView {
  const client = useClient();
  const [store] = useState(() => new ProcessListStore());
  const [codeVersion, codeLoaded] = useReducer((n: number) => n + 1, 0);
  const [codes] = useState(() => new CodeCache(client, codeLoaded));
  useEffect(() => {
    store.start(client);
    return () => store.stop();
  }, [client, store]);
  const version = useSyncExternalStore(store.listen, store.version);
  const searching = (filter.text ?? '').trim() !== '';
  // biome-ignore lint/correctness/useExhaustiveDependencies: version and codeVersion mark the store's changes
  const processes = useMemo(
    () =>
      store
        .all()
        .filter((snapshot) =>
          matchesFilter(snapshot, filter, searching ? codes.get(snapshot.pid) : undefined),
        ),
    [store, codes, version, codeVersion, filter, searching],
  );
  return {
    processes,
    total: store.size,
    hasMore: store.hasMore,
    loadMore: store.loadMore,
    ready: store.ready,
    error: store.error,
  };
}
