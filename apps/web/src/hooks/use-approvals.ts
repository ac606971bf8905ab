import type { Approval, ApprovalState } from '@mci/client';
import { useCallback, useEffect, useState } from 'react';
import { useClient } from '../connection/connection-context.ts';

/** What {@link useApprovals} returns. */
export interface ApprovalsView {
  /** Newest first; undefined until the first answer. */
  approvals: Approval[] | undefined;
  /** Whether older approvals are left to load. */
  hasMore: boolean;
  error: string | undefined;
}

/** Approvals per page the console reads. */
const PAGE_SIZE = 100;

/**
 * The approvals the user may see (`state`, or every state), newest first, kept up to date: the
 * newest page, and one more page per `loadMore`; every `approval` event of a visible process reads
 * the pages loaded again.
 */
export function useApprovals(state: ApprovalState | undefined): ApprovalsView & { loadMore: () => void } {
  const client = useClient();
  const [view, setView] = useState<ApprovalsView>({ approvals: undefined, hasMore: false, error: undefined });
  const [pages, setPages] = useState(1);
  // biome-ignore lint/correctness/useExhaustiveDependencies: another state starts again from one page
  useEffect(() => setPages(1), [state]);
  const loadMore = useCallback(() => setPages((n) => n + 1), []);
  useEffect(() => {
    let active = true;
    let reading = false;
    let again = false;
    const read = async () => {
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      try {
        do {
          again = false;
          const approvals: Approval[] = [];
          let cursor: string | undefined;
          let read = 0;
          do {
            const page = await client.listApprovals({
              limit: PAGE_SIZE,
              ...(state !== undefined && { state }),
              ...(cursor !== undefined && { cursor }),
            });
            approvals.push(...page.items);
            cursor = page.nextCursor;
            read++;
          } while (cursor !== undefined && read < pages);
          if (active) setView({ approvals, hasMore: cursor !== undefined, error: undefined });
        } while (again && active);
      } catch (error) {
        if (active) setView((previous) => ({ ...previous, error: (error as Error).message }));
      } finally {
        reading = false;
      }
    };
    const subscription = client.subscribe(
      { all: true },
      {
        onEvent: (event) => {
          if (event.type === 'approval') void read();
        },
      },
    );
    void read();
    return () => {
      active = false;
      subscription.close();
    };
  }, [client, state, pages]);
  return { ...view, loadMore };
}
