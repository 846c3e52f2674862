import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { roleOf } from '../../src/config/index.js';
import { sandboxEnv, sandboxMismatches } from '../../src/devtools/sandbox-env.js';
import { cleanup, openSandbox } from '../sandbox/helpers.js';

describe("the sandbox's connection lines", () => {
  it('connect as its test merchant, or as its test partner with the merchant keys emptied; doctor compares the role the configuration has', async () => {
    const sandbox = await openSandbox();
    try {
      const merchant = sandboxEnv(sandbox.credentials);
      expect(Object.keys(merchant)).toEqual([
        'CHECKOUT_BASE_URL',
        'CHECKOUT_WEBHOOK_SECRET',
        'CHECKOUT_API_KEY',
        'CHECKOUT_SIGNING_SECRET',
        'CHECKOUT_INVOICE_KEY',
      ]);
      const partner = sandboxEnv(sandbox.credentials, 'partner');
      expect(partner).toMatchObject({
        CHECKOUT_PARTNER_API_KEY: sandbox.credentials.test.partner.apiKey,
        CHECKOUT_PARTNER_SIGNING_SECRET: sandbox.credentials.test.partner.signingSecret,
        CHECKOUT_API_KEY: '',
        CHECKOUT_SIGNING_SECRET: '',
        CHECKOUT_INVOICE_KEY: '',
      });

      const asPartner = loadConfig({ env: { ...partner }, dotenv: false });
      expect(roleOf(asPartner)).toBe('partner');
      expect(sandboxMismatches(asPartner, sandbox.credentials)).toEqual([]);
      const asMerchant = loadConfig({ env: { ...merchant }, dotenv: false });
      expect(roleOf(asMerchant)).toBe('merchant');
      expect(sandboxMismatches(asMerchant, sandbox.credentials)).toEqual([]);
      const wrongPartner = loadConfig({ env: { ...partner, CHECKOUT_PARTNER_SIGNING_SECRET: 'svc_ps_test_other' }, dotenv: false });
      expect(sandboxMismatches(wrongPartner, sandbox.credentials)).toEqual([{ variable: 'CHECKOUT_PARTNER_SIGNING_SECRET', problem: 'differs' }]);
    } finally {
      await cleanup();
    }
  });
});
