import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, redact } from '../../src/errors/index.js';
import { SecretsBox, SecretsKeyError } from '../../src/partner/index.js';

const newKey = () => randomBytes(32).toString('base64');

describe('SecretsBox', () => {
  it('seals so that the value holds no plaintext and opens only for the context it was sealed for', () => {
    const box = SecretsBox.fromVariable(newKey());
    const sealed = box.seal('svc_ms_secret-of-tenant-a', 'tenant a (test)');
    expect(sealed).toMatch(/^v1\.[0-9a-f]{8}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('secret-of-tenant-a');
    expect(box.open(sealed, 'tenant a (test)')).toBe('svc_ms_secret-of-tenant-a');
    // Tenant A's sealed credentials copied onto tenant B's row do not open.
    expect(() => box.open(sealed, 'tenant b (test)')).toThrow(SecretsKeyError);
    expect(() => box.open(sealed, 'tenant b (test)')).toThrow(/copied from another tenant/);
    // Two seals of one value differ (a fresh IV each time).
    expect(box.seal('x', 'c')).not.toBe(box.seal('x', 'c'));
  });

  it('rotates: the first key seals, every listed key opens, and a value of a dropped key says how to rotate', () => {
    const [oldKey, newer] = [newKey(), newKey()];
    const before = SecretsBox.fromVariable(oldKey);
    const sealed = before.seal('credentials', 'ctx');
    const during = SecretsBox.fromVariable(`${newer}, ${oldKey}`);
    expect(during.open(sealed, 'ctx')).toBe('credentials');
    expect(SecretsBox.keyIdOf(during.seal('credentials', 'ctx'))).toBe(during.sealingKeyId);
    expect(during.sealingKeyId).not.toBe(before.sealingKeyId);
    const after = SecretsBox.fromVariable(newer);
    expect(() => after.open(sealed, 'ctx')).toThrow(
      /sealed with key [0-9a-f]{8}, which CHECKOUT_SECRETS_KEY does not hold: .*merchants rekey.*merchants credentials --clear. with that tenant and its --environment/,
    );
  });

  it('accepts 32-byte keys in base64 or hex, refuses anything else with a line that says how to make one, and redacts them', () => {
    const hex = randomBytes(32).toString('hex');
    expect(SecretsBox.fromVariable(hex).sealingKeyId).toMatch(/^[0-9a-f]{8}$/);
    expect(() => SecretsBox.fromVariable(undefined)).toThrow(ConfigError);
    expect(() => SecretsBox.fromVariable('')).toThrow(/CHECKOUT_SECRETS_KEY is not set: .*openssl rand -base64 32/);
    expect(() => SecretsBox.fromVariable('too-short')).toThrow(/key 1 is not 32 bytes in base64 or hex/);
    expect(() => SecretsBox.fromVariable(`${newKey()},${randomBytes(16).toString('base64')}`)).toThrow(/key 2 is not 32 bytes/);
    expect(redact(`the key is ${hex}`)).toBe('the key is [redacted]');
  });
});
