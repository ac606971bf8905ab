import { isIP } from 'node:net';

/**
 * True when `host` names only the local machine: `localhost`, an address in 127.0.0.0/8, `::1`, or an
 * IPv4-mapped loopback (`::ffff:127.0.0.1`). Wildcards (`0.0.0.0`, `::`) and other names are not.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || /^::ffff:127\./.test(h) || h === '0:0:0:0:0:0:0:1';
  return false;
}
