import type { FetchRequestData, FetchResponseData } from '@mci/sandbox';
import { collectEnvReferences, renderTemplate } from '@mci/schema';
import picomatch from 'picomatch';
import { z } from 'zod';

/** Secret values shorter than this are refused: redacting them would hit common words. */
export const MIN_SECRET_LENGTH = 8;

/**
 * One credential the host adds to the sandbox's `fetch` (docs/security.md): for a request whose host
 * matches `host` (a glob on the host name or `host:port`) and whose path starts with `pathPrefix`,
 * the `headers` (replacing any of the same name the program set) and `query` parameters, their
 * values MCI templates (`Bearer {{env.GITHUB_TOKEN}}`) rendered on the host.
 */
export const CredentialSchema = z
  .strictObject({
    host: z.string().min(1),
    pathPrefix: z.string().startsWith('/').optional(),
    headers: z.record(z.string().min(1), z.string()).optional(),
    query: z.record(z.string().min(1), z.string()).optional(),
  })
  .refine((credential) => credential.headers !== undefined || credential.query !== undefined, {
    message: 'a credential needs headers or query',
  });
/** @see CredentialSchema */
export type Credential = z.infer<typeof CredentialSchema>;

/** A secret value and the name it is redacted as (`[redacted:NAME]`). */
export interface Secret {
  name: string;
  value: string;
}

interface Resolved {
  matches: (url: URL) => boolean;
  headers: Array<[string, string]>;
  query: Array<[string, string]>;
}

/**
 * The credentials of a server, rendered once from the environment: what to add to a request, and the
 * secret values to take out of what comes back into the sandbox.
 */
export class Credentials {
  readonly secrets: readonly Secret[];
  readonly #rules: Resolved[];

  /**
   * @throws Error naming the entry (`credentials[0].headers.Authorization`) when a template does not
   * render (an unset variable) or a secret value is shorter than {@link MIN_SECRET_LENGTH}.
   */
  constructor(credentials: readonly Credential[], env: Record<string, string | undefined>) {
    const secrets = new Map<string, string>();
    this.#rules = credentials.map((credential, index) => {
      const render = (where: string, template: string) => {
        for (const name of collectEnvReferences(template)) {
          const value = env[name];
          if (value === undefined || value === '')
            throw new Error(`credentials[${index}].${where}: the environment variable ${name} is not set`);
          if (value.length < MIN_SECRET_LENGTH)
            throw new Error(
              `credentials[${index}].${where}: ${name} is shorter than ${MIN_SECRET_LENGTH} characters; a value that short cannot be told apart from ordinary text`,
            );
          secrets.set(value, name);
        }
        return renderTemplate(template, { props: {}, env });
      };
      const glob = picomatch(credential.host.toLowerCase(), { dot: true });
      return {
        matches: (url: URL) =>
          (glob(url.hostname.toLowerCase()) || glob(url.host.toLowerCase())) &&
          (credential.pathPrefix === undefined || url.pathname.startsWith(credential.pathPrefix)),
        headers: Object.entries(credential.headers ?? {}).map(([name, value]) => [
          name,
          render(`headers.${name}`, value),
        ]),
        query: Object.entries(credential.query ?? {}).map(([name, value]) => [
          name,
          render(`query.${name}`, value),
        ]),
      };
    });
    // Longest first: a secret that contains another is replaced whole.
    this.secrets = [...secrets]
      .map(([value, name]) => ({ name, value }))
      .sort((a, b) => b.value.length - a.value.length);
  }

  /**
   * `request` with the credentials of the first entry that matches `url` added; undefined when none
   * does. `hostBound` names the headers a redirect to another host drops.
   */
  apply(request: FetchRequestData, url: URL): { request: FetchRequestData; hostBound: string[] } | undefined {
    const rule = this.#rules.find((candidate) => candidate.matches(url));
    if (!rule) return undefined;
    const names = new Set(rule.headers.map(([name]) => name.toLowerCase()));
    const target = new URL(url);
    for (const [name, value] of rule.query) target.searchParams.set(name, value);
    return {
      request: {
        ...request,
        url: target.href,
        headers: [...request.headers.filter(([name]) => !names.has(name.toLowerCase())), ...rule.headers],
      },
      hostBound: rule.headers.map(([name]) => name),
    };
  }

  /** `text` with every secret value replaced by `[redacted:NAME]`. */
  redact(text: string): string {
    let out = text;
    for (const { name, value } of this.secrets)
      if (out.includes(value)) out = out.replaceAll(value, `[redacted:${name}]`);
    return out;
  }

  /** A response with every secret value in its headers and body replaced. */
  redactResponse(response: FetchResponseData): FetchResponseData {
    if (this.secrets.length === 0) return response;
    const body = Buffer.from(response.body.buffer, response.body.byteOffset, response.body.byteLength);
    const hit = this.secrets.some(({ value }) => body.includes(value));
    return {
      ...response,
      url: this.redact(response.url),
      headers: response.headers.map(([name, value]) => [name, this.redact(value)]),
      body: hit ? new Uint8Array(Buffer.from(this.redact(body.toString('latin1')), 'latin1')) : response.body,
    };
  }

  /** A JSON value (a tool result) with every secret value in its strings replaced. */
  redactValue<T>(value: T): T {
    if (this.secrets.length === 0) return value;
    const text = JSON.stringify(value);
    if (text === undefined || !this.secrets.some(({ value: secret }) => text.includes(secret))) return value;
    return JSON.parse(this.redact(text)) as T;
  }
}
