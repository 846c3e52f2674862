/** Test fixtures: the same samples merchants get from `checkout-kit/testing`, plus key formats. */
export { samplePayment, sampleInvoice, sampleInvoiceDetail, sampleMerchant } from '../../src/testing/index.js';

export const BASE_URL = 'https://api.checkout.test';

/** Test-environment credentials in the formats of the spec (not real secrets). */
export const TEST_KEYS = {
  apiKey: 'svc_mk_test_merchantkey0123456789',
  signingSecret: 'svc_ms_merchantsecret0123456789',
  invoiceKey: 'test_invoicekey0123456789abcdef',
  partnerApiKey: 'svc_pk_test_partnerkey0123456789',
  partnerSigningSecret: 'svc_ps_partnersecret0123456789',
};

/** A `PartnerClient`'s options with the test partner keys. */
export const PARTNER_OPTIONS = { baseUrl: BASE_URL, apiKey: TEST_KEYS.partnerApiKey, signingSecret: TEST_KEYS.partnerSigningSecret };
