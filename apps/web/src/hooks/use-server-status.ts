import { useEffect, useState } from 'react';
import { ApiError, apiGet } from '../connection/api-fetch.ts';
import { useConnection } from '../connection/connection-context.ts';
import { parsePrometheusText, type Sample, sampleValue } from './prometheus-text.ts';

/** How often the Status page polls, in ms. */
export const STATUS_POLL_MS = 2000;
/** How many polls the chart keeps (5 minutes at {@link STATUS_POLL_MS}). */
const HISTORY = 150;

/** Processes by the status of their latest run at one moment. */
export interface StatusPoint {
  at: number;
  success: number;
  failed: number;
  timeout: number;
  canceled: number;
  none: number;
}

/** What {@link useServerStatus} returns. */
export interface ServerStatus {
  /** `ok`, `shutting_down`, or `unreachable`. */
  health: string | undefined;
  /** The latest `/metrics` samples (operators only). */
  samples: Sample[] | undefined;
  history: StatusPoint[];
  /** Why metrics are not shown (`FORBIDDEN` for client tokens). */
  error: string | undefined;
}

/** Polls `GET /healthz` and `GET /metrics` and keeps the last minutes of processes by status. */
export function useServerStatus(): ServerStatus {
  const { token } = useConnection();
  const [status, setStatus] = useState<ServerStatus>({
    health: undefined,
    samples: undefined,
    history: [],
    error: undefined,
  });
  useEffect(() => {
    let active = true;
    const poll = async () => {
      const health = await apiGet<{ status: string }>('/healthz', undefined)
        .then((body) => body.status)
        .catch((error: unknown) =>
          error instanceof ApiError && error.status === 503 ? 'shutting_down' : 'unreachable',
        );
      let samples: Sample[] | undefined;
      let error: string | undefined;
      try {
        samples = parsePrometheusText(await apiGet<string>('/metrics', token, 'text'));
      } catch (caught) {
        error = (caught as Error).message;
      }
      if (!active) return;
      setStatus((previous) => {
        const byStatus = (value: string) =>
          samples === undefined
            ? 0
            : (sampleValue(samples, 'mci_processes_by_status', { status: value }) ?? 0);
        const point: StatusPoint = {
          at: Date.now(),
          success: byStatus('success'),
          failed: byStatus('failed'),
          timeout: byStatus('timeout'),
          canceled: byStatus('canceled'),
          none: byStatus('none'),
        };
        const history =
          samples === undefined ? previous.history : [...previous.history, point].slice(-HISTORY);
        return { health, samples, history, error };
      });
    };
    void poll();
    const timer = setInterval(() => void poll(), STATUS_POLL_MS);
    return () => {
      active = false;
      clearInterval(timer);
    };
  }, [token]);
  return status;
}
