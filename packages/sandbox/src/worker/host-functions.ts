import { getRandomValues, randomUUID } from 'node:crypto';
import { URL_PARTS } from '../bootstrap/url.ts';

const SETTABLE = new Set<string>(URL_PARTS.filter((p) => p !== 'origin'));

const encoder = new TextEncoder();
const decoders = {
  lenient: new TextDecoder('utf-8'),
  fatal: new TextDecoder('utf-8', { fatal: true }),
  lenientKeepBom: new TextDecoder('utf-8', { ignoreBOM: true }),
  fatalKeepBom: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }),
};

const parts = (url: URL) => {
  const out: Record<string, string> = {};
  for (const key of URL_PARTS) out[key] = url[key];
  return out;
};

const isString = (v: unknown): v is string => typeof v === 'string';

/**
 * The synchronous functions the sandbox's web APIs call (`URL`, `URLSearchParams`, `TextEncoder`,
 * `TextDecoder`, `crypto`), done by Node itself. Every argument comes from untrusted code: types are
 * checked, nothing throws (a host exception would carry host stack frames into the isolate), and
 * bytes are returned in fresh buffers (never a view on Node's pooled memory).
 */
export function hostFunction(op: unknown, ...args: unknown[]): unknown {
  try {
    switch (op) {
      case 'url.parse': {
        const [input, base] = args;
        if (!isString(input) || (base !== undefined && !isString(base))) return null;
        const url = URL.parse(input, base);
        return url ? parts(url) : null;
      }
      case 'url.set': {
        const [href, key, value] = args;
        if (!isString(href) || !isString(key) || !isString(value) || !SETTABLE.has(key)) return null;
        const url = new URL(href);
        (url as unknown as Record<string, string>)[key] = value;
        return parts(url);
      }
      case 'qs.parse':
        return isString(args[0]) ? [...new URLSearchParams(args[0])] : [];
      case 'qs.stringify': {
        const pairs = args[0];
        if (!Array.isArray(pairs)) return '';
        const params = new URLSearchParams();
        for (const pair of pairs) {
          if (Array.isArray(pair) && isString(pair[0]) && isString(pair[1])) params.append(pair[0], pair[1]);
        }
        return params.toString();
      }
      case 'utf8.encode':
        return isString(args[0]) ? encoder.encode(args[0]) : new Uint8Array(0);
      case 'utf8.decode': {
        const [bytes, fatal, ignoreBOM] = args;
        if (!(bytes instanceof Uint8Array)) return { ok: true, value: '' };
        const decoder = fatal
          ? ignoreBOM
            ? decoders.fatalKeepBom
            : decoders.fatal
          : ignoreBOM
            ? decoders.lenientKeepBom
            : decoders.lenient;
        try {
          return { ok: true, value: decoder.decode(bytes) };
        } catch {
          return { ok: false, value: '' };
        }
      }
      case 'crypto.randomUUID':
        return randomUUID();
      case 'crypto.randomBytes': {
        const n = args[0];
        if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 65536) return new Uint8Array(0);
        return getRandomValues(new Uint8Array(n));
      }
      default:
        return null;
    }
  } catch {
    return null;
  }
}
