import type { Approval, ApprovalState } from '@mci/client';
import { useEffect, useState } from 'react';
import { useClient } from '../connection/connection-context.ts';

/** What {@link useApprovals} returns. */
export interface ApprovalsView {
  /** Oldest first; undefined until the first answer. */
  approvals: Approval[] | undefined;
  error: string | undefined;
}

/** Most approvals the page reads (pages of 100). */
const MAX_APPROVALS = 1000;

/**
 * The approvals the user may see (`state`, or every state), kept up to date: every `approval` event
 * of a visible process reads the list again.
 */
export function useApprovals(state: ApprovalState | undefined): ApprovalsView {
  const client = useClient();
  const [view, setView] = useState<ApprovalsView>({ approvals: undefined, error: undefined });
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
          do {
            const page = await client.listApprovals({
              ...(state !== undefined && { state }),
              ...(cursor !== undefined && { cursor }),
            });
            approvals.push(...page.items);
            cursor = page.nextCursor;
          } while (cursor !== undefined && approvals.length < MAX_APPROVALS);
          if (active) setView({ approvals, error: undefined });
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
  }, [client, state]);
  return view;
}
