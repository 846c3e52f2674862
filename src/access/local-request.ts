import { isIP } from 'node:net';

/** Headers a proxy adds: a request that carries one came from elsewhere, whatever its socket says. */
const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-real-ip', 'x-forwarded-host'] as const;

/** 127.0.0.0/8, ::1, and IPv4 loopback mapped into IPv6. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const plain = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  if (isIP(plain) === 4) return plain.startsWith('127.');
  return plain === '::1';
}

/** A host to listen on or connect to that is this machine: a loopback address or `localhost`. */
export function isLoopbackHost(host: string): boolean {
  return isLoopbackAddress(host) || host === 'localhost';
}

/** The loopback hosts as a URL's `hostname` writes them (IPv6 in brackets). */
export const LOOPBACK_URL_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Whether a request's `Host` names this machine by a loopback address or `localhost` (any port).
 * A page of another site that rebinds its own name to 127.0.0.1 (DNS rebinding) reaches a loopback
 * server from this machine's browser, as the same origin as itself, but its requests still name
 * that site in `Host`. A request without `Host` (HTTP/1.0) names nothing and passes.
 */
export function isAddressedToThisMachine(host: string | undefined): boolean {
  if (host === undefined) return true;
  if (!URL.canParse(`http://${host}`)) return false;
  const { hostname, username, password, pathname, search, hash } = new URL(`http://${host}`);
  if (username || password || pathname !== '/' || search || hash) return false;
  return isLoopbackHost(hostname.replace(/^\[(.*)\]$/, '$1'));
}

/**
 * Whether a request comes from this machine: its socket is on loopback and no proxy header says it
 * was relayed. It lets this machine in only when no console token is configured: a reverse proxy on
 * the same host connects from 127.0.0.1 for every visitor, and only its forwarding headers (which it
 * may not send) tell them apart, so `decideAccess` asks a configured token of every request.
 */
export function isLocalRequest(remoteAddress: string | undefined, headers: Record<string, string | string[] | undefined>): boolean {
  return isLoopbackAddress(remoteAddress) && FORWARDING_HEADERS.every((name) => headers[name] === undefined);
}
