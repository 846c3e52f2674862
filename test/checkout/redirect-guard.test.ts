import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkRedirectUrl } from '../../src/checkout/index.js';
import { RedirectRejectedError } from '../../src/errors/index.js';

const guard = { allowedHosts: ['pay.example.com', '127.0.0.1:4010'], allowLoopbackHttp: false };

describe('checkRedirectUrl', () => {
  it.each(['https://pay.example.com/c/123', 'https://PAY.example.com/c/123?x=1#top', 'https://pay.example.com'])('allows %s', (url) => {
    expect(checkRedirectUrl(url, guard).hostname).toBe('pay.example.com');
  });

  it.each([
    ['//evil.example', 'protocol-relative'],
    ['https://pay.example.com@evil.example/', 'user-info'],
    ['https://pay.example.com:pw@evil.example/', 'user-info with password'],
    ['https://pay.example.com.evil.example/', 'suffix'],
    ['https://evilpay.example.com/', 'prefix'],
    ['https://evil.example/pay.example.com', 'allowed host in the path'],
    ['https:\\\\evil.example', 'backslashes'],
    ['https://pay.example.com\\@evil.example', 'backslash then at'],
    ['/\\evil.example', 'slash backslash'],
    ['javascript:alert(1)', 'javascript:'],
    ['JaVaScRiPt:alert(1)//https://pay.example.com', 'javascript: mixed case'],
    ['data:text/html,<script>alert(1)</script>', 'data:'],
    ['https://evil.example%2F@pay.example.com', 'percent-encoded slash in user-info'],
    ['https://pay.example.com%2F.evil.example/', 'percent-encoded slash in host'],
    ['https://pay.example.com%5C.evil.example/', 'percent-encoded backslash'],
    ['https://pаy.example.com/', 'IDN look-alike (Cyrillic a)'],
    ['https://xn--py-8kc.example.com/', 'punycode look-alike'],
    ['http://pay.example.com/', 'plain http'],
    ['https:/pay.example.com/', 'single slash'],
    ['https://pay.example.com:8443/', 'another port'],
    [' https://pay.example.com/', 'leading space'],
    ['https://pay.example.com\n.evil.example/', 'newline'],
    ['ftp://pay.example.com/', 'ftp'],
    ['', 'empty'],
  ])('refuses %s (%s)', (url) => {
    expect(() => checkRedirectUrl(url, guard)).toThrow(RedirectRejectedError);
  });

  it('allows http only to loopback, only when asked (sandbox, test environment)', () => {
    expect(() => checkRedirectUrl('http://127.0.0.1:4010/checkout/x', guard)).toThrow(/not https/);
    expect(checkRedirectUrl('http://127.0.0.1:4010/checkout/x', { ...guard, allowLoopbackHttp: true }).port).toBe('4010');
    expect(() => checkRedirectUrl('http://127.0.0.1:4011/checkout/x', { ...guard, allowLoopbackHttp: true })).toThrow(/allow-list/);
    expect(() => checkRedirectUrl('http://pay.example.com/', { ...guard, allowLoopbackHttp: true })).toThrow(/not https/);
  });

  it('never lets a URL through whose host is off the allow-list (property)', () => {
    const allowed = 'pay.example.com';
    const pieces = fc.constantFrom(
      'https://',
      'http://',
      '//',
      '/\\',
      'https:',
      'javascript:',
      allowed,
      '@',
      '.',
      '%2F',
      '%5C',
      '\\',
      ':',
      '/',
      'evil.example',
      'xn--',
      'а',
      '#',
      '?',
      ':443',
      '%40',
      '\t',
    );
    const crafted = fc.array(pieces, { minLength: 1, maxLength: 8 }).map((parts) => parts.join(''));
    const anything = fc.oneof(crafted, fc.webUrl({ withFragments: true, withQueryParameters: true }), fc.string());
    fc.assert(
      fc.property(anything, (raw) => {
        let url: URL | undefined;
        try {
          url = checkRedirectUrl(raw, { allowedHosts: [allowed] });
        } catch (error) {
          expect(error).toBeInstanceOf(RedirectRejectedError);
          return;
        }
        // Whatever got through must be exactly what a browser would open on the allowed host.
        expect(url.protocol).toBe('https:');
        expect(url.host).toBe(allowed);
        expect(url.username + url.password).toBe('');
        expect(new URL(url.href).host).toBe(allowed);
      }),
      { numRuns: 5000 },
    );
  });
});
