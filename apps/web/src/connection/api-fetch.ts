/** An HTTP API call answered with an error (`{ error, code }` body) or not reached. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** The HTTP status (0 when the server was not reached). */
  readonly status: number;
  /** The server's error code (`UNAUTHORIZED`, `FORBIDDEN`, ...) or `HTTP_<status>`. */
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/**
 * GET `path` of the server's HTTP API (same origin) with `token` as a Bearer header; the JSON body, or
 * the text with `as: 'text'`, or the bytes as a `Blob` with `as: 'blob'`.
 * @throws ApiError with the server's `code` (`UNAUTHORIZED`, `FORBIDDEN`, ...), or `HTTP_<status>`.
 */
export async function apiGet<T>(
  path: string,
  token: string | undefined,
  as: 'json' | 'text' | 'blob' = 'json',
): Promise<T> {
  const response = await fetch(path, {
    headers: token === undefined ? {} : { Authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(30_000),
  });
  if (!response.ok) {
    const body = (await response.json().catch(() => ({}))) as { error?: unknown; code?: unknown };
    const code = typeof body.code === 'string' ? body.code : `HTTP_${response.status}`;
    const message = typeof body.error === 'string' ? body.error : `GET ${path} answered ${response.status}`;
    throw new ApiError(response.status, code, message);
  }
  return (as === 'json' ? response.json() : as === 'blob' ? response.blob() : response.text()) as Promise<T>;
}
