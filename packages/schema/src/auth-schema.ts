import { z } from 'zod';

/**
 * API key authentication: the key goes into a header or a query parameter.
 * `value` is templated at run time (usually `{{env.API_KEY}}`).
 * @see MCI schema reference, "API Key Authentication"
 */
export const ApiKeyAuthSchema = z.strictObject({
  type: z.literal('apiKey'),
  /** Where the key is sent. */
  in: z.enum(['header', 'query']),
  /** Header or query-parameter name, e.g. `X-API-Key`. */
  name: z.string().min(1),
  value: z.string(),
});

/** Bearer token authentication (`Authorization: Bearer <token>`). */
export const BearerAuthSchema = z.strictObject({
  type: z.literal('bearer'),
  token: z.string(),
});

/** HTTP Basic authentication (`Authorization: Basic base64(username:password)`). */
export const BasicAuthSchema = z.strictObject({
  type: z.literal('basic'),
  username: z.string(),
  password: z.string(),
});

/**
 * OAuth2 client-credentials authentication: the executor fetches a token from `tokenUrl` and sends
 * it as a bearer token. Only the `clientCredentials` flow exists in MCI 1.0.
 */
export const OAuth2AuthSchema = z.strictObject({
  type: z.literal('oauth2'),
  flow: z.literal('clientCredentials'),
  tokenUrl: z.string().min(1),
  clientId: z.string(),
  clientSecret: z.string(),
  /** @default [] */
  scopes: z.array(z.string()).default([]),
});

/**
 * Authentication of an http execution, discriminated on `type`: `apiKey`, `bearer`, `basic`, `oauth2`.
 * @see MCI schema reference, "Authentication"
 */
export const AuthSchema = z.discriminatedUnion('type', [
  ApiKeyAuthSchema,
  BearerAuthSchema,
  BasicAuthSchema,
  OAuth2AuthSchema,
]);

export type ApiKeyAuth = z.infer<typeof ApiKeyAuthSchema>;
export type BearerAuth = z.infer<typeof BearerAuthSchema>;
export type BasicAuth = z.infer<typeof BasicAuthSchema>;
export type OAuth2Auth = z.infer<typeof OAuth2AuthSchema>;
/** Authentication of an http execution (defaults applied). */
export type Auth = z.infer<typeof AuthSchema>;
