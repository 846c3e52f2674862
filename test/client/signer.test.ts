import { describe, expect, it } from 'vitest';
import { checkRequestSignature, defaultRequestSigner } from '../../src/client/index.js';

const SECRET = 'svc_ms_signersecret0123456789';
const request = { method: 'POST', path: '/v1/payments', body: '{"amount":"1"}', secret: SECRET };

describe('checkRequestSignature', () => {
  it('accepts what defaultRequestSigner makes', () => {
    expect(checkRequestSignature({ ...request, header: defaultRequestSigner(request) })).toBeUndefined();
  });

  // Buffer.from(hex) stops at the first non-hex character, so a valid signature followed
  // by anything was accepted.
  it.each(['zz', 'g', '0', '00', ' extra', '!'])('a valid signature with trailing garbage %j does not match', (garbage) => {
    const header = `${defaultRequestSigner(request)}${garbage}`;
    expect(checkRequestSignature({ ...request, header })).toBe('X-Request-Signature does not match');
  });

  it('a truncated signature or an empty v1 does not match', () => {
    const header = defaultRequestSigner(request);
    expect(checkRequestSignature({ ...request, header: header.slice(0, -2) })).toBe('X-Request-Signature does not match');
    expect(checkRequestSignature({ ...request, header: header.replace(/v1=.*/, 'v1=') })).toBe('X-Request-Signature does not match');
  });

  it('the hex digits may be upper case', () => {
    const header = defaultRequestSigner(request).replace(/v1=(.*)/, (_, hex: string) => `v1=${hex.toUpperCase()}`);
    expect(checkRequestSignature({ ...request, header })).toBeUndefined();
  });
});
