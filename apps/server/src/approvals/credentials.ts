import type { FetchRequestData } from '@mci/sandbox';
import { collectEnvReferences, MIN_SECRET_LENGTH, renderTemplate, type Secret } from '@mci/schema';
import picomatch from 'picomatch';
import { z } from 'zod';

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

interface Resolved {
  matches: (url: URL) => boolean;
  headers: Array<[string, string]>;
  query: Array<[string, string]>;
}

/**
 * The credentials of a server, rendered once from the environment: what to add to a request, and the
 * secret values it adds (the server's redactor takes them out of what comes back).
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
}
