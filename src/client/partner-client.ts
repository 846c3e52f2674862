import { ConfigError, registerSecret } from '../errors/index.js';
import { loadConfig, checkKey, type LoadConfigOptions } from '../config/index.js';
import { MerchantSchema, PartnerPaymentReadSchema, PartnerPaymentSchema, type Environment, type Merchant, type PartnerPayment } from '../schemas/index.js';
import type { CreateOptions } from './checkout-client.js';
import { idempotencyKeyFor } from './idempotency.js';
import {
  CreateMerchantInputSchema,
  PartnerCreatePaymentInputSchema,
  parseInput,
  pathId,
  type CreateMerchantInput,
  type PartnerCreatePaymentInput,
} from './inputs.js';
import type { RateLimiter } from './rate-limiter.js';
import { Transport, type CallOptions, type RequestAuth, type TransportOptions } from './transport.js';

export interface PartnerClientOptions extends TransportOptions {
  /** Partner API key `svc_pk_{test,live}_…`. */
  apiKey: string;
  /** Partner signing secret `svc_ps_…`. */
  signingSecret: string;
}

/**
 * The partner's client: create merchants (spec 4.2) and payments on behalf of a merchant (4.1).
 * @example
 * const partner = new PartnerClient({ baseUrl, apiKey: 'svc_pk_test_…', signingSecret: 'svc_ps_…' });
 * const merchant = await partner.merchants.create({ externalTenantId: 't-1', email: 'shop@example.com', name: 'Shop' });
 */
export class PartnerClient {
  readonly environment: Environment | undefined;
  private readonly transport: Transport;
  /** The limiter every call of this client starts through; give it to another client of the same service to share it. */
  readonly rateLimiter: RateLimiter;
  private readonly auth: RequestAuth;

  constructor(options: PartnerClientOptions) {
    if (!options.baseUrl) throw new ConfigError('PartnerClient needs baseUrl (CHECKOUT_BASE_URL).');
    if (!options.apiKey || !options.signingSecret) {
      throw new ConfigError('PartnerClient needs apiKey and signingSecret (CHECKOUT_PARTNER_API_KEY, CHECKOUT_PARTNER_SIGNING_SECRET).');
    }
    registerSecret(options.apiKey);
    registerSecret(options.signingSecret);
    this.environment = checkKey('partner-key', options.apiKey, 'apiKey');
    checkKey('partner-secret', options.signingSecret, 'signingSecret');
    this.auth = { bearer: options.apiKey, signingSecret: options.signingSecret };
    this.transport = new Transport(options);
    this.rateLimiter = this.transport.rateLimiter;
  }

  /** A partner client from `CHECKOUT_PARTNER_*` variables (and `.env`). */
  static fromEnv(options: LoadConfigOptions & Omit<TransportOptions, 'baseUrl'> = {}): PartnerClient {
    const config = loadConfig(options);
    if (!config.baseUrl) throw new ConfigError('CHECKOUT_BASE_URL is not set.');
    if (!config.partnerApiKey || !config.partnerSigningSecret) {
      throw new ConfigError('CHECKOUT_PARTNER_API_KEY and CHECKOUT_PARTNER_SIGNING_SECRET must both be set for partner operations.');
    }
    return new PartnerClient({ ...options, baseUrl: config.baseUrl, apiKey: config.partnerApiKey, signingSecret: config.partnerSigningSecret });
  }

  readonly merchants = {
    /** Create merchant (spec 4.2): `POST /v1/partner/merchants`. */
    create: async (input: CreateMerchantInput, options: CreateOptions = {}): Promise<Merchant> => {
      const operation = 'merchants.create';
      const body = parseInput(CreateMerchantInputSchema, input, operation);
      const idempotencyKey = idempotencyKeyFor(options.idempotencyKey);
      return this.transport.request({
        operation,
        method: 'POST',
        path: '/v1/partner/merchants',
        body,
        auth: this.auth,
        idempotencyKey,
        schema: MerchantSchema,
        signal: options.signal,
      });
    },
  };

  readonly payments = {
    /** Create payment for a merchant (spec 4.1): `POST /v1/partner/payments`; the answer carries `merchantId`. */
    create: async (input: PartnerCreatePaymentInput, options: CreateOptions = {}): Promise<PartnerPayment> => {
      const operation = 'partner.payments.create';
      const body = parseInput(PartnerCreatePaymentInputSchema, input, operation);
      const idempotencyKey = idempotencyKeyFor(options.idempotencyKey);
      return this.transport.request({
        operation,
        method: 'POST',
        path: '/v1/partner/payments',
        body,
        auth: this.auth,
        idempotencyKey,
        schema: PartnerPaymentSchema,
        signal: options.signal,
      });
    },
    /**
     * Get payment (spec 4.7) with the partner's key, for a payment it created for one of its
     * merchants: the answer carries that `merchantId`. The spec leaves who may read a partner's
     * payment open; this is the default assumed (README, Assumptions).
     */
    get: async (id: string, options: CallOptions = {}): Promise<PartnerPayment> => {
      const operation = 'partner.payments.get';
      const path = `/v1/payments/${pathId(id, operation)}`;
      return this.transport.request({ operation, method: 'GET', path, auth: this.auth, schema: PartnerPaymentReadSchema, signal: options.signal });
    },
  };

  /** Invoices are a merchant's own (spec 4.3–4.5): a partner has none to read. */
  readonly invoices = {
    /** Always refused: a partner key reads no invoice. */
    get: async (id: string): Promise<never> => {
      throw new ConfigError(`Invoice ${id}: invoices are read with a merchant's invoice key; a partner's key reads payments only.`);
    },
  };
}
