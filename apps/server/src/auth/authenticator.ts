import { createHash, timingSafeEqual } from 'node:crypto';
import { LOCAL_OPERATOR, type Principal, type PrincipalRole } from './principal.ts';

/** One accepted token and what it grants. */
export interface TokenGrant {
  /** The secret as the caller sends it (`Authorization: Bearer <token>` or `?token=`). */
  token: string;
  role: PrincipalRole;
  /** Principal id; @default `<role>-<first 12 hex digits of sha256(token)>` */
  id?: string;
}

/** Outcome of checking a request's credentials. */
export type AuthResult =
  | { ok: true; principal: Principal }
  | { ok: false; code: 'UNAUTHORIZED'; message: string };

/** Checks bearer tokens; built once from the configured grants. */
export interface Authenticator {
  /** True when at least one token is configured (else every caller is the local operator). */
  readonly required: boolean;
  /** The principal ids of the tokens (`local` alone when there are none). */
  readonly principals: readonly string[];
  /** Resolves a presented token (or its absence) to a principal. */
  authenticate(token: string | undefined): AuthResult;
}

const sha256 = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/**
 * Builds an authenticator. Tokens are compared in constant time: both sides are hashed with SHA-256
 * first (equal lengths, as `timingSafeEqual` requires) and every grant is checked, so the time taken
 * depends neither on where a guess differs nor on which grant matches.
 * @throws TypeError when a token is empty, two grants share a token, or one principal id is given two
 * roles (a client token named `operator` would read the operator's processes).
 */
export function createAuthenticator(grants: readonly TokenGrant[]): Authenticator {
  const entries = grants.map((grant) => {
    if (grant.token.length === 0) throw new TypeError('a configured token is empty');
    const hash = sha256(grant.token);
    const id = grant.id ?? `${grant.role}-${hash.toString('hex').slice(0, 12)}`;
    return { hash, principal: Object.freeze({ id, role: grant.role }) satisfies Principal };
  });
  const seen = new Set<string>();
  const roles = new Map<string, PrincipalRole>();
  for (const entry of entries) {
    const key = entry.hash.toString('hex');
    if (seen.has(key)) throw new TypeError(`two grants share one token (principal ${entry.principal.id})`);
    seen.add(key);
    const { id, role } = entry.principal;
    const other = roles.get(id);
    if (other !== undefined && other !== role)
      throw new TypeError(
        `principal id ${id} has tokens of two roles (${other} and ${role}): an id names one principal, with one role`,
      );
    roles.set(id, role);
  }
  return {
    required: entries.length > 0,
    principals:
      entries.length === 0 ? [LOCAL_OPERATOR.id] : [...new Set(entries.map((entry) => entry.principal.id))],
    authenticate(token) {
      if (entries.length === 0) return { ok: true, principal: LOCAL_OPERATOR };
      if (token === undefined || token === '') {
        return {
          ok: false,
          code: 'UNAUTHORIZED',
          message:
            'a bearer token is required: send the header "Authorization: Bearer <token>" (this server does not use OAuth)',
        };
      }
      const presented = sha256(token);
      let found: Principal | undefined;
      for (const entry of entries) {
        if (timingSafeEqual(presented, entry.hash) && found === undefined) found = entry.principal;
      }
      return found
        ? { ok: true, principal: found }
        : { ok: false, code: 'UNAUTHORIZED', message: 'invalid token' };
    },
  };
}

/**
 * Takes the token out of an `Authorization` header value (`Bearer <token>`, scheme case-insensitive).
 * Returns undefined when the header is absent or uses another scheme.
 */
export function bearerToken(header: string | null | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}
