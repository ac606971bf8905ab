import {
  type Approval,
  type ApprovalPage,
  ApprovalPageSchema,
  ApprovalSchema,
  type ApprovalState,
  type CallPage,
  CallPageSchema,
  ErrorBodySchema,
  type Page,
  type PageRequest,
  pageSchema,
  type RunSnapshot,
  RunSnapshotSchema,
  type RunSummary,
  RunSummarySchema,
  type Skill,
  SkillCheckFailedSchema,
  SkillPageSchema,
  type SkillSaveRequest,
  SkillSchema,
} from '@mci/protocol';
import { ClientError } from './client-error.ts';

const RunSummaryPageSchema = pageSchema(RunSummarySchema);
/** A filter of {@link HttpApi.approvals}: `cursor` is the `nextCursor` of the previous page. */
export interface ApprovalListOptions {
  state?: ApprovalState;
  pid?: number;
  cursor?: string;
  /** Items per page (1-100). @default 50 */
  limit?: number;
}

/** A page of {@link HttpApi.calls}: `cursor` is the `nextCursor` of the previous page. */
export interface CallListOptions {
  cursor?: string;
  /** Calls per page (1-100). @default 50 */
  limit?: number;
}

/**
 * What the WebSocket protocol does not carry (a run's outputs and logs, a process's code, approvals),
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
    return parseAnswer(RunSnapshotSchema, await this.#get(`/processes/${pid}/runs/${run}`, 'json'));
  }

  /** `GET /processes/:pid/runs/:n/calls`: a page of the run's tool calls and fetches (the audit). */
  async calls(pid: number, run: number, options: CallListOptions = {}): Promise<CallPage> {
    const query = new URLSearchParams();
    if (options.cursor !== undefined) query.set('cursor', options.cursor);
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    const answer = await this.#get(
      `/processes/${pid}/runs/${run}/calls${query.size > 0 ? `?${query}` : ''}`,
      'json',
    );
    return parseAnswer(CallPageSchema, answer);
  }

  /** `GET /processes/:pid/runs`: a page of the process's runs, newest first, without outputs and logs. */
  async runs(pid: number, options: PageRequest = {}): Promise<Page<RunSummary>> {
    const query = new URLSearchParams();
    if (options.cursor !== undefined) query.set('cursor', options.cursor);
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    const answer = await this.#get(`/processes/${pid}/runs${query.size > 0 ? `?${query}` : ''}`, 'json');
    return parseAnswer(RunSummaryPageSchema, answer);
  }

  /** `GET /processes/:pid/code`. */
  async code(pid: number): Promise<string> {
    return (await this.#get(`/processes/${pid}/code`, 'text')) as string;
  }

  /** `GET /approvals` (docs/approvals.md). */
  async approvals(options: ApprovalListOptions = {}): Promise<ApprovalPage> {
    const query = new URLSearchParams(
      Object.entries(options)
        .filter(([, value]) => value !== undefined)
        .map(([key, value]): [string, string] => [key, String(value)]),
    );
    const answer = await this.#get(`/approvals${query.size > 0 ? `?${query}` : ''}`, 'json');
    return parseAnswer(ApprovalPageSchema, answer);
  }

  /** `GET /approvals/:id`. */
  async approval(id: string): Promise<Approval> {
    return parseAnswer(ApprovalSchema, await this.#get(`/approvals/${encodeURIComponent(id)}`, 'json'));
  }

  /** `POST /skills`: saves a skill. @throws ClientError `CHECK_FAILED` (its `diagnostics`), `VALIDATION`. */
  async saveSkill(skill: SkillSaveRequest): Promise<Skill> {
    return parseAnswer(SkillSchema, await this.#send('POST', '/skills', 'json', skill));
  }

  /** `GET /skills`: a page of the caller's skills, newest first. */
  async skills(page: { cursor?: string; limit?: number } = {}): Promise<Page<Skill>> {
    const query = new URLSearchParams();
    if (page.cursor !== undefined) query.set('cursor', page.cursor);
    if (page.limit !== undefined) query.set('limit', String(page.limit));
    return parseAnswer(
      SkillPageSchema,
      await this.#get(`/skills${query.size > 0 ? `?${query}` : ''}`, 'json'),
    );
  }

  /** `GET /skills/:name` (the latest version) or `/skills/:name/versions/:version`. */
  async skill(name: string, version?: number): Promise<Skill> {
    const path = `/skills/${encodeURIComponent(name)}${version === undefined ? '' : `/versions/${version}`}`;
    return parseAnswer(SkillSchema, await this.#get(path, 'json'));
  }

  /** `DELETE /skills/:name`: the skill and every version. @throws ClientError `NOT_FOUND`. */
  async deleteSkill(name: string): Promise<void> {
    await this.#send('DELETE', `/skills/${encodeURIComponent(name)}`, 'none');
  }

  #get(path: string, as: 'json' | 'text'): Promise<unknown> {
    return this.#send('GET', path, as);
  }

  async #send(method: string, path: string, as: 'json' | 'text' | 'none', body?: unknown): Promise<unknown> {
    const url = `${this.#base}${path}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: {
          ...(this.#token !== undefined && { Authorization: `Bearer ${this.#token}` }),
          ...(body !== undefined && { 'Content-Type': 'application/json' }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (error) {
      const timedOut = (error as Error).name === 'TimeoutError';
      throw new ClientError(
        timedOut ? 'TIMEOUT' : 'CONNECT_FAILED',
        `${method} ${url}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    if (!response.ok) {
      const raw: unknown = await response.json().catch(() => undefined);
      const failure = ErrorBodySchema.safeParse(raw);
      const refused = SkillCheckFailedSchema.safeParse(raw);
      const code = failure.success
        ? failure.data.code
        : response.status === 401
          ? 'UNAUTHORIZED'
          : `HTTP_${response.status}`;
      const message = failure.success ? failure.data.error : `${method} ${path} answered ${response.status}`;
      const retryAfter = failure.success ? failure.data.retryAfter : undefined;
      throw new ClientError(code, message, {
        ...(retryAfter !== undefined && { retryAfter }),
        ...(refused.success && { diagnostics: refused.data.diagnostics }),
      });
    }
    if (as === 'none') return undefined;
    return as === 'json' ? response.json() : response.text();
  }
}

/** `value` checked by `schema`. @throws ClientError `PROTOCOL` when it does not fit. */
function parseAnswer<T>(
  schema: { safeParse(value: unknown): { success: true; data: T } | { success: false; error: Error } },
  value: unknown,
): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new ClientError('PROTOCOL', `unexpected answer from the server: ${parsed.error.message}`);
  return parsed.data;
}
