import { ErrorBodySchema, type RunSnapshot, RunSnapshotSchema } from '@mci/protocol';
import { ClientError } from './client-error.ts';

/**
 * The few reads the WebSocket protocol does not carry (a run's outputs and logs, a process's code),
 * over the server's HTTP API on the same port, with the same token as a Bearer header.
 */
export class HttpApi {
  readonly #base: string;
  readonly #token: string | undefined;
  readonly #timeoutMs: number;

  constructor(base: string, token: string | undefined, timeoutMs: number) {
    this.#base = base;
    this.#token = token;
    this.#timeoutMs = timeoutMs;
  }

  /** `GET /processes/:pid/runs/:n`. @throws ClientError (`NOT_FOUND`, `UNAUTHORIZED`, `CONNECT_FAILED`, ...) */
  async run(pid: number, run: number): Promise<RunSnapshot> {
    const parsed = RunSnapshotSchema.safeParse(await this.#get(`/processes/${pid}/runs/${run}`, 'json'));
    if (!parsed.success)
      throw new ClientError('PROTOCOL', `unexpected answer from the server: ${parsed.error.message}`);
    return parsed.data;
  }

  /** `GET /processes/:pid/code`. */
  async code(pid: number): Promise<string> {
    return (await this.#get(`/processes/${pid}/code`, 'text')) as string;
  }

  async #get(path: string, as: 'json' | 'text'): Promise<unknown> {
    const url = `${this.#base}${path}`;
    let response: Response;
    try {
      response = await fetch(url, {
        headers: this.#token === undefined ? {} : { Authorization: `Bearer ${this.#token}` },
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (error) {
      const timedOut = (error as Error).name === 'TimeoutError';
      throw new ClientError(
        timedOut ? 'TIMEOUT' : 'CONNECT_FAILED',
        `GET ${url}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    if (!response.ok) {
      const body = ErrorBodySchema.safeParse(await response.json().catch(() => undefined));
      const code = body.success
        ? body.data.code
        : response.status === 401
          ? 'UNAUTHORIZED'
          : `HTTP_${response.status}`;
      const message = body.success ? body.data.error : `GET ${path} answered ${response.status}`;
      throw new ClientError(code, message);
    }
    return as === 'json' ? response.json() : response.text();
  }
}
