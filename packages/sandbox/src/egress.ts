import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector, fetch } from 'undici';
import type { FetchRequestData, FetchResponseData } from './bootstrap/fetch.ts';
import { SandboxError } from './sandbox-error.ts';

/** One `--allow-net` entry: a host name or IP address, and optionally a port. */
export interface AllowNetEntry {
  host: string;
  port?: number;
}

/** Special-purpose ranges of the IANA registry that ipaddr.js does not list yet. */
const MORE_SPECIAL_V6: Array<[ipaddr.IPv6, number]> = [
  // RFC 9780: the dummy IPv6 prefix.
  [ipaddr.IPv6.parse('100:0:0:1::'), 64],
];

/**
 * Whether `address` (an IP literal) is one sandboxed code may not reach unless allowed: anything but
 * a global unicast address. Every range of the IANA special-purpose registries counts as internal
 * (loopback, private, link-local, CGNAT, multicast, documentation, benchmarking, 6to4, Teredo,
 * NAT64, ...), as ipaddr.js classifies them. An IPv4-mapped IPv6 address (`::ffff:7f00:1`) is
 * classified as the IPv4 address it carries; IPv4-compatible ones (`::7f00:1`, the deprecated
 * `::/96`) are internal. A string that is not an IP address is internal too.
 *
 * @see https://www.iana.org/assignments/iana-ipv4-special-registry/
 * @see https://www.iana.org/assignments/iana-ipv6-special-registry/
 */
export function isInternalAddress(address: string): boolean {
  if (isIP(address) === 0) return true;
  let ip: ipaddr.IPv4 | ipaddr.IPv6 = ipaddr.parse(address);
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) ip = v6.toIPv4Address();
    else if (v6.parts.slice(0, 6).every((part) => part === 0)) return true;
    else if (MORE_SPECIAL_V6.some((range) => v6.match(range))) return true;
  }
  return ip.range() !== 'unicast';
}

/**
 * Parses `--allow-net` entries: `HOST`, `HOST:PORT`, `[IPV6]` or `[IPV6]:PORT`.
 *
 * @throws SandboxError `INVALID_OPTION` naming the bad entry.
 */
export function parseAllowNet(entries: readonly string[] = []): AllowNetEntry[] {
  return entries.map((entry) => {
    const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s/]+))(?::(\d{1,5}))?$/.exec(entry.trim());
    const port = match?.[3] === undefined ? undefined : Number(match[3]);
    if (!match || (port !== undefined && (port < 1 || port > 65535))) {
      throw new SandboxError(
        'INVALID_OPTION',
        `allowNet entry "${entry}" is not HOST, HOST:PORT or [IPV6]:PORT`,
      );
    }
    const host = (match[1] ?? match[2]!).toLowerCase();
    return port === undefined ? { host } : { host, port };
  });
}

const stripBrackets = (host: string) =>
  host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;

/**
 * Whether a request of one execution may go to `url` besides what `allowNet` allows (a server's
 * `fetch` policy rules). Asked again for every redirect.
 */
export type EgressAllow = (url: URL, method: string) => boolean;

/** A `fetch` for sandboxed code, behind the egress policy; see {@link createEgressFetch}. */
export interface EgressFetch {
  /**
   * @throws EgressDenied (`code` `EGRESS_DENIED`) for a host neither `allowNet` nor `allow` allows,
   * before any DNS look-up; a TypeError for a refused address or a failed connection.
   */
  fetch(
    request: FetchRequestData,
    options: {
      signal: AbortSignal;
      maxResponseBytes: number;
      allow?: EgressAllow;
      /** Headers dropped once a redirect leaves the request's host (credentials the host added). */
      hostBound?: readonly string[];
    },
  ): Promise<FetchResponseData>;
  close(): Promise<void>;
}

/** Redirects a request follows at most (the Fetch standard's limit). */
const MAX_REDIRECTS = 20;

/** The default port of `url`'s scheme when it names none. */
const portOf = (url: URL) => Number(url.port) || (url.protocol === 'https:' ? 443 : 80);

/**
 * Creates the host side of the sandbox's `fetch`, denied by default: a request goes out only to a
 * host in `allowNet` or one the execution's `allow` accepts (checked before any DNS look-up, and
 * again for every redirect, which is followed here as a new request). Then undici with a connector
 * that resolves each host itself and refuses internal addresses (see {@link isInternalAddress})
 * unless the host or the address is in `allowNet`; the socket connects to the very address that was
 * checked, so DNS rebinding cannot slip past it.
 */
export function createEgressFetch(allowNet: readonly AllowNetEntry[]): EgressFetch {
  const allowed = (host: string, port: number) =>
    allowNet.some((entry) => entry.host === host && (entry.port === undefined || entry.port === port));

  const pick = async (hostname: string, port: number): Promise<string> => {
    const host = stripBrackets(hostname).toLowerCase();
    const addresses = isIP(host)
      ? [host]
      : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    if (addresses.length === 0) throw new Error(`${host} did not resolve`);
    if (allowed(host, port)) return addresses[0]!;
    const usable = addresses.find((address) => !isInternalAddress(address) || allowed(address, port));
    if (usable !== undefined) return usable;
    throw new EgressRefused(
      `${host}:${port} resolves to ${addresses[0]}, a loopback, private or link-local address; ` +
        `the sandbox may not reach it unless the operator allows it (--allow-net ${host}:${port})`,
    );
  };

  const base = buildConnector({ timeout: 10_000 });
  const agent = new Agent({
    connect(options, callback) {
      const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
      pick(options.hostname, port).then(
        (address) => {
          const servername = isIP(stripBrackets(options.hostname)) ? undefined : options.hostname;
          base({ ...options, hostname: address, servername: options.servername ?? servername }, callback);
        },
        (error: Error) => callback(error, null),
      );
    },
  });

  /** @throws EgressDenied for a URL no rule allows. */
  const check = (url: URL, method: string, allow: EgressAllow | undefined) => {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new TypeError(`fetch: only http: and https: URLs are supported, got ${url.protocol}`);
    }
    const host = stripBrackets(url.hostname).toLowerCase();
    if (allowed(host, portOf(url)) || allow?.(url, method)) return;
    throw new EgressDenied(
      `fetch: ${url.host} is not allowed: the sandbox reaches only the hosts a rule allows ` +
        `(--allow-net ${url.host}, allowNet in the server's config, or a fetch rule in its policies)`,
    );
  };

  return {
    async fetch(request, { signal, maxResponseBytes, allow, hostBound }) {
      const bound = new Set((hostBound ?? []).map((name) => name.toLowerCase()));
      let url = new URL(request.url);
      let method = request.method;
      let body = request.body;
      let headers = request.headers;
      let redirected = false;
      let response: Awaited<ReturnType<typeof fetch>>;
      for (let hops = 0; ; hops++) {
        check(url, method, allow);
        response = await fetch(url, { method, headers, body, signal, dispatcher: agent, redirect: 'manual' });
        const location = response.headers.get('location');
        if (![301, 302, 303, 307, 308].includes(response.status) || location === null) break;
        await response.body?.cancel().catch(() => {});
        if (hops >= MAX_REDIRECTS) throw new TypeError(`fetch: more than ${MAX_REDIRECTS} redirects`);
        const next = new URL(location, url);
        // As the Fetch standard: a 303 (and a POST answered 301 or 302) goes on as a GET without
        // a body, and credentials do not follow to another origin.
        if (
          response.status === 303 ||
          ((response.status === 301 || response.status === 302) && method === 'POST')
        ) {
          method = 'GET';
          body = undefined;
          headers = headers.filter(([name]) => !/^content-/i.test(name));
        }
        if (next.origin !== url.origin)
          headers = headers.filter(([name]) => !/^(authorization|cookie|proxy-authorization)$/i.test(name));
        if (next.hostname !== url.hostname)
          headers = headers.filter(([name]) => !bound.has(name.toLowerCase()));
        url = next;
        redirected = true;
      }
      const chunks: Uint8Array[] = [];
      let size = 0;
      if (response.body) {
        for await (const chunk of response.body) {
          size += chunk.byteLength;
          if (size > maxResponseBytes) {
            await response.body.cancel().catch(() => {});
            throw new RangeError(
              `fetch: the response body is larger than maxFetchResponseBytes (${maxResponseBytes} bytes)`,
            );
          }
          chunks.push(chunk);
        }
      }
      const bytes = new Uint8Array(size);
      let offset = 0;
      for (const chunk of chunks) {
        bytes.set(chunk, offset);
        offset += chunk.byteLength;
      }
      const responseHeaders: [string, string][] = [];
      for (const [name, value] of response.headers)
        if (name !== 'set-cookie') responseHeaders.push([name, value]);
      for (const cookie of response.headers.getSetCookie()) responseHeaders.push(['set-cookie', cookie]);
      return {
        status: response.status,
        statusText: response.statusText,
        url: url.href,
        redirected,
        headers: responseHeaders,
        body: bytes,
      };
    },
    close: () => agent.close(),
  };
}

/** A connection the egress policy refused. */
export class EgressRefused extends Error {
  override name = 'EgressRefused';
}

/** A request to a host no rule allows (refused before any DNS look-up). */
export class EgressDenied extends Error {
  override name = 'EgressDenied';
  readonly code = 'EGRESS_DENIED';
}

/** The message the sandbox sees for a failed fetch: undici's `fetch failed` plus its cause. */
export function fetchErrorMessage(error: unknown): string {
  if (!(error instanceof Error)) return `fetch failed: ${String(error)}`;
  let cause: unknown = error;
  while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
  const reason = cause instanceof Error ? cause.message : String(cause);
  return error.message === reason ? error.message : `${error.message}: ${reason}`;
}
