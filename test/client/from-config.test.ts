import { describe, expect, it } from 'vitest';
import { clientFromConfig, partnerFromConfig } from '../../src/client/index.js';
import { loadConfig, roleOf } from '../../src/config/index.js';

const KEYS = {
  CHECKOUT_API_KEY: 'svc_mk_test_merchant0000',
  CHECKOUT_SIGNING_SECRET: 'svc_ms_test_merchant0000',
  CHECKOUT_INVOICE_KEY: 'test_invoicekey00000000',
  CHECKOUT_PARTNER_API_KEY: 'svc_pk_test_partner00000',
  CHECKOUT_PARTNER_SIGNING_SECRET: 'svc_ps_test_partner00000',
};
const NAMES = Object.keys(KEYS) as Array<keyof typeof KEYS>;

/** Every configuration of the service's base URL with some of the keys. */
const configurations = Array.from({ length: 2 ** NAMES.length }, (_, mask) => {
  const chosen = NAMES.filter((_, bit) => mask & (1 << bit));
  const env = { CHECKOUT_BASE_URL: 'http://127.0.0.1:9', ...Object.fromEntries(chosen.map((name) => [name, KEYS[name]])) };
  return [chosen.join(' + ') || 'no key', env] as const;
});

describe('the role a configuration connects as', () => {
  it.each(configurations)('%s: the role and the client made from it agree', (_name, env) => {
    const config = loadConfig({ env, dotenv: false });
    const partner = partnerFromConfig(config);
    // A partner platform's client exactly when the role is partner and both of its keys are there.
    expect(partner !== undefined).toBe(roleOf(config) === 'partner' && config.partnerSigningSecret !== undefined);
    // Never both a merchant's client and a partner's.
    if (partner) expect(clientFromConfig(config)).toBeUndefined();
  });

  it('an invoice key makes a merchant shop, with the partner keys beside it too', () => {
    const config = loadConfig({
      env: {
        CHECKOUT_BASE_URL: 'http://127.0.0.1:9',
        CHECKOUT_INVOICE_KEY: KEYS.CHECKOUT_INVOICE_KEY,
        CHECKOUT_PARTNER_API_KEY: KEYS.CHECKOUT_PARTNER_API_KEY,
        CHECKOUT_PARTNER_SIGNING_SECRET: KEYS.CHECKOUT_PARTNER_SIGNING_SECRET,
      },
      dotenv: false,
    });
    expect(roleOf(config)).toBe('merchant');
    expect(partnerFromConfig(config)).toBeUndefined();
  });
});
