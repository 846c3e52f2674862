import { LOOPBACK_URL_HOSTS } from '../access/local-request.js';
import { RedirectRejectedError } from '../errors/index.js';
import type { Environment } from '../schemas/index.js';

/** Which hosts a checkout URL may send the buyer to. */
export interface RedirectGuardOptions {
  /** Hosts (`host` or `host:port`, lower case) the buyer may be sent to. */
  allowedHosts: string[];
  /**
   * Allow plain `http` to loopback hosts (the local sandbox). `createCheckout`, `checkoutRoutes` and
   * the checkout handlers default it to whether the creator's keys are test keys; `checkRedirectUrl`
   * alone to false.
   */
  allowLoopbackHttp?: boolean;
}

/**
 * The guard a creator of `environment` checks with: plain `http` to loopback allowed with test keys
 * (the sandbox's checkout pages), as `serve` has it, unless `allowLoopbackHttp` says otherwise.
 */
export function redirectGuardFor(options: RedirectGuardOptions, environment: Environment | undefined): RedirectGuardOptions {
  return options.allowLoopbackHttp === undefined ? { ...options, allowLoopbackHttp: environment === 'test' } : options;
}

/**
 * Return the parsed URL when `raw` is safe to send the buyer to; throw `RedirectRejectedError`
 * otherwise. Safe means: written plainly as `https://host/…` (or `http://` to loopback when
 * allowed), no user-info, and a host exactly in the allow-list (no suffix or look-alike match).
 */
export function checkRedirectUrl(raw: unknown, options: RedirectGuardOptions): URL {
  if (typeof raw !== 'string' || raw === '') throw new RedirectRejectedError(String(raw), 'not a URL string');
  // Parsers repair backslashes, tabs and newlines into something else: refuse them outright.
  if (/[\\\s\u0000-\u001f\u007f]/.test(raw)) throw new RedirectRejectedError(raw, 'it contains backslashes, spaces or control characters');
  const scheme = /^(https?):\/\/[^/]/i.exec(raw);
  if (!scheme) throw new RedirectRejectedError(raw, 'it is not an absolute http(s) URL');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RedirectRejectedError(raw, 'it does not parse as a URL');
  }
  if (url.username || url.password || /^https?:\/\/[^/?#]*@/i.test(raw)) throw new RedirectRejectedError(raw, 'it carries user-info (user@host)');
  if (/%2f|%5c/i.test(raw.split(/[?#]/)[0] ?? '')) throw new RedirectRejectedError(raw, 'it contains an encoded slash');
  const loopback = LOOPBACK_URL_HOSTS.has(url.hostname);
  if (url.protocol === 'http:' && !(loopback && options.allowLoopbackHttp)) throw new RedirectRejectedError(raw, 'it is not https');
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new RedirectRejectedError(raw, `scheme ${url.protocol} is not allowed`);
  const allowed = options.allowedHosts.map((host) => host.toLowerCase());
  // `url.host` is punycode for IDN names, so a look-alike never equals an ASCII allow-list entry.
  if (!allowed.includes(url.host)) {
    throw new RedirectRejectedError(raw, `host ${url.host} is not in the allow-list (${allowed.join(', ') || 'empty'})`);
  }
  return url;
}
