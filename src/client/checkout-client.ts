import { ConfigError } from '../errors/index.js';
import { loadConfig, checkKey, environmentOf, type LoadConfigOptions } from '../config/index.js';
import {
  InvoiceDetailSchema,
  InvoiceListSchema,
  InvoiceSchema,
  PaymentSchema,
  PaymentReadSchema,
  type Environment,
  type Invoice,
  type InvoiceDetail,
  type Payment,
} from '../schemas/index.js';
import { idempotencyKeyFor } from './idempotency.js';
import { CreateInvoiceInputSchema, CreatePaymentInputSchema, parseInput, pathId, type CreateInvoiceInput, type CreatePaymentInput } from './inputs.js';
import type { RateLimiter } from './rate-limiter.js';
import { Transport, type CallOptions, type RequestAuth, type TransportOptions } from './transport.js';
import { registerSecret } from '../errors/index.js';

export interface CheckoutClientOptions extends TransportOptions {
  /** Merchant API key `svc_mk_{test,live}_…` (payments). */
  apiKey?: string | undefined;
  /** Merchant signing secret `svc_ms_…` (payments). */
  signingSecret?: string | undefined;
  /** Invoice-operations key `test_…` / `live_…` (invoices). */
  invoiceKey?: string | undefined;
}

/** Options of a create call. */
export interface CreateOptions extends CallOptions {
  /** Sent as `Idempotency-Key` on every retry of this call. @default a new UUID per call */
  idempotencyKey?: string;
}

/**
 * The merchant's client: payments (spec 4.6, 4.7) and invoices (4.3–4.5).
 * @example
 * const client = new CheckoutClient({ baseUrl, apiKey, signingSecret, invoiceKey });
 * const payment = await client.payments.create({ amount: '25.00', email: 'buyer@example.com' });
 */
export class CheckoutClient {
  readonly environment: Environment | undefined;
  private readonly transport: Transport;
  /** The limiter every call of this client starts through; give it to another client of the same service to share it. */
  readonly rateLimiter: RateLimiter;
  private readonly options: CheckoutClientOptions;

  constructor(options: CheckoutClientOptions) {
    if (!options.baseUrl) throw new ConfigError('CheckoutClient needs baseUrl (CHECKOUT_BASE_URL).');
    for (const secret of [options.apiKey, options.signingSecret, options.invoiceKey]) registerSecret(secret);
    this.environment = environmentOf([
      { variable: 'apiKey', environment: options.apiKey ? checkKey('merchant-key', options.apiKey, 'apiKey') : undefined },
      { variable: 'invoiceKey', environment: options.invoiceKey ? checkKey('invoice-key', options.invoiceKey, 'invoiceKey') : undefined },
    ]);
    if (options.signingSecret) checkKey('merchant-secret', options.signingSecret, 'signingSecret');
    this.options = options;
    this.transport = new Transport(options);
    this.rateLimiter = this.transport.rateLimiter;
  }

  /** A client from `CHECKOUT_*` variables (and `.env`). */
  static fromEnv(options: LoadConfigOptions & Omit<TransportOptions, 'baseUrl'> = {}): CheckoutClient {
    const config = loadConfig(options);
    if (!config.baseUrl) throw new ConfigError('CHECKOUT_BASE_URL is not set.');
    return new CheckoutClient({
      ...options,
      baseUrl: config.baseUrl,
      apiKey: config.apiKey,
      signingSecret: config.signingSecret,
      invoiceKey: config.invoiceKey,
    });
  }

  private merchantAuth(operation: string): RequestAuth {
    if (!this.options.apiKey || !this.options.signingSecret) {
      throw new ConfigError(`${operation} needs the merchant apiKey and signingSecret (CHECKOUT_API_KEY, CHECKOUT_SIGNING_SECRET).`);
    }
    return { bearer: this.options.apiKey, signingSecret: this.options.signingSecret };
  }

  private invoiceAuth(operation: string): RequestAuth {
    if (!this.options.invoiceKey) throw new ConfigError(`${operation} needs the invoice key (CHECKOUT_INVOICE_KEY, test_… or live_…).`);
    return { bearer: this.options.invoiceKey };
  }

  readonly payments = {
    /** Create payment (spec 4.6): `POST /v1/payments`. */
    create: async (input: CreatePaymentInput, options: CreateOptions = {}): Promise<Payment> => {
      const operation = 'payments.create';
      const body = parseInput(CreatePaymentInputSchema, input, operation);
      const auth = this.merchantAuth(operation);
      const idempotencyKey = idempotencyKeyFor(options.idempotencyKey);
      return this.transport.request({
        operation,
        method: 'POST',
        path: '/v1/payments',
        body,
        auth,
        idempotencyKey,
        schema: PaymentSchema,
        signal: options.signal,
      });
    },
    /** Get payment (spec 4.7): `GET /v1/payments/{id}`. */
    get: async (id: string, options: CallOptions = {}): Promise<Payment> => {
      const operation = 'payments.get';
      const path = `/v1/payments/${pathId(id, operation)}`;
      return this.transport.request({ operation, method: 'GET', path, auth: this.merchantAuth(operation), schema: PaymentReadSchema, signal: options.signal });
    },
  };

  readonly invoices = {
    /** Create invoice (spec 4.3): `POST /v1/invoices`, bearer invoice key. */
    create: async (input: CreateInvoiceInput, options: CreateOptions = {}): Promise<Invoice> => {
      const operation = 'invoices.create';
      const body = parseInput(CreateInvoiceInputSchema, input, operation);
      const auth = this.invoiceAuth(operation);
      const idempotencyKey = idempotencyKeyFor(options.idempotencyKey);
      return this.transport.request({
        operation,
        method: 'POST',
        path: '/v1/invoices',
        body,
        auth,
        idempotencyKey,
        schema: InvoiceSchema,
        signal: options.signal,
      });
    },
    /** List invoices (spec 4.4, contract 3f): `GET /v1/invoices`, at most 100, newest first. */
    list: async (options: CallOptions = {}): Promise<Invoice[]> => {
      const operation = 'invoices.list';
      return this.transport.request({
        operation,
        method: 'GET',
        path: '/v1/invoices',
        auth: this.invoiceAuth(operation),
        schema: InvoiceListSchema,
        signal: options.signal,
      });
    },
    /** Get invoice (spec 4.5, contract 3f): `GET /v1/invoices/{id}` with payments and settlements. */
    get: async (id: string, options: CallOptions = {}): Promise<InvoiceDetail> => {
      const operation = 'invoices.get';
      const path = `/v1/invoices/${pathId(id, operation)}`;
      return this.transport.request({ operation, method: 'GET', path, auth: this.invoiceAuth(operation), schema: InvoiceDetailSchema, signal: options.signal });
    },
  };
}
