import type { CallRecord, MciClient } from '@mci/client';

/** Pages a run's calls are read in (the server's largest). */
const PAGE = 100;

/** Every call of run `run` of process `pid` (the server's audit), a page at a time. */
export async function readCalls(client: MciClient, pid: number, run: number): Promise<CallRecord[]> {
  const calls: CallRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listCalls(pid, run, { limit: PAGE, ...(cursor !== undefined && { cursor }) });
    calls.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return calls;
}
