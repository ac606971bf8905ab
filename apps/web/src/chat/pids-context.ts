import { createContext } from 'react';

/** The pid of each exec block of the answer being rendered (`pids[N]` for block N). */
export const PidsContext = createContext<ReadonlyArray<number | undefined>>([]);
