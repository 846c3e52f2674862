import { defaultLogger, type Logger } from '../../log/index.js';
import { defaultOwner } from '../../runs/index.js';
import type { Environment } from '../../schemas/common.js';
import type { Store } from '../../store/types.js';
import type { MerchantSecrets } from './merchant-secrets.js';
import type { EnvelopeMapper } from './parse-delivery.js';
import { positive, requireEventSink } from './positive-option.js';
import { DEFAULT_SCHEME, type WebhookScheme } from '../schemes/scheme.js';
import { normalizeDoctorOptions, type DoctorOptions, type NormalizedDoctorOptions } from '../doctor/doctor-options.js';

/** How long stored events keep their payload and their id. */
export interface RetentionOptions {
  /** Drop the raw payload of finished events after this many days (the id stays, for dedupe). @default 30 */
  payloadDays?: number;
  /** Forget finished events entirely (ids too) after this many days. At least 7. @default 90 */
  idDays?: number;
  /** How often a started receiver prunes. @default 3_600_000 (hourly) */
  intervalMs?: number;
}

/**
 * @example
 * createReceiver({ store, secrets: config.webhookSecrets, environment: 'live' })
 */
export interface ReceiverOptions {
  /** Where events, dispatch runs and dead letters are kept. */
  store: Store;
  /** One or more secrets; several during a rotation (`CHECKOUT_WEBHOOK_SECRET`, split on spaces and commas). */
  secrets: string | readonly string[];
  /** @default { kind: 'standard-webhooks' } */
  scheme?: WebhookScheme;
  /** Allowed clock distance of a signed timestamp, both ways. @default 300 */
  toleranceSeconds?: number;
  /** Refuse (403) events of the other environment. @default undefined (accept both) */
  environment?: Environment | undefined;
  /** Larger bodies get 413 and nothing is stored. @default 65536 */
  maxBodyBytes?: number;
  /** Map another service's envelope to `{ id, type, createdAt, environment, data }`. @default identity */
  mapEnvelope?: EnvelopeMapper;
  /** @default createLogger() (JSON lines on stderr, secrets redacted) */
  logger?: Logger;
  /** Worker id written on leases. @default `${hostname}:${pid}:${random}` */
  owner?: string;
  /** How long a dispatch may hold an event before another worker may take it over. @default 30000 */
  leaseMs?: number;
  /** Attempts before an event's run is marked `failed`. @default 8 */
  maxAttempts?: number;
  /** Base delay of the exponential retry backoff, in ms. @default 1000 */
  backoffMs?: number;
  /** Longest retry delay, in ms. @default 600000 */
  maxBackoffMs?: number;
  /** How often a started receiver looks for due runs (retries, crashed workers' events). @default 1000 */
  pollIntervalMs?: number;
  /**
   * Events dispatched at once. Deliveries are acknowledged as soon as they are stored, whatever
   * the backlog; dispatch then works through the stored queue oldest first, this many at a time,
   * so a flushed backlog never opens thousands of calls to the service or handlers at once.
   * @default 16
   */
  dispatchConcurrency?: number;
  /** Run handlers. `false`: only verify, store and acknowledge (another process dispatches). @default true */
  dispatch?: boolean;
  /** Payload and id retention; `false` never prunes. @default {} (30 / 90 days, hourly) */
  retention?: RetentionOptions | false;
  /**
   * The clock of signature timestamps, receive times, dispatch leases and retries. Give the
   * fulfillment engine's (`engine.clock`) so both decide on one clock. @default () => new Date()
   */
  clock?: () => Date;
  /**
   * The raw-body doctor: explains a delivery that failed verification (in the log, as a dead
   * letter, and in development mode in the 401 answer). `false` turns it off. It never accepts one.
   * @default {} (see `DoctorOptions` for development mode and the rate limit)
   */
  doctor?: DoctorOptions | false;
  /**
   * Partner platforms whose service signs each merchant's deliveries with that merchant's own
   * secret: the secrets of the merchant a delivery names (`data.merchantId`). A delivery that
   * `secrets` do not verify is tried with these; verified so, it speaks for that merchant alone (the
   * fulfillment engine ignores it for another merchant's payment). @default none
   */
  merchantSecrets?: MerchantSecrets | undefined;
}

export type NormalizedReceiverOptions = Required<
  Omit<ReceiverOptions, 'environment' | 'mapEnvelope' | 'retention' | 'secrets' | 'doctor' | 'backoff' | 'merchantSecrets'>
> & {
  merchantSecrets: MerchantSecrets | undefined;
  secrets: readonly string[];
  environment: Environment | undefined;
  doctor: NormalizedDoctorOptions | false;
  mapEnvelope: EnvelopeMapper | undefined;
  retention: Required<RetentionOptions> | false;
};

/** Stored events dispatched at once when no `dispatchConcurrency` is given. */
export const DEFAULT_DISPATCH_CONCURRENCY = 16;
const DAY_MS = 86_400_000;

/** Defaults applied and values checked up front, so a bad option fails at start-up, not mid-delivery. */
export function normalizeReceiverOptions(options: ReceiverOptions): NormalizedReceiverOptions {
  const retention =
    options.retention === false
      ? false
      : {
          payloadDays: options.retention?.payloadDays ?? 30,
          idDays: options.retention?.idDays ?? 90,
          intervalMs: options.retention?.intervalMs ?? 3_600_000,
        };
  if (retention) {
    positive('retention.idDays', retention.idDays, 7);
    positive('retention.payloadDays', retention.payloadDays, 0);
    positive('retention.intervalMs', retention.intervalMs);
  }
  return {
    store: requireEventSink(options.store, 'createReceiver'),
    secrets: typeof options.secrets === 'string' ? [options.secrets] : options.secrets,
    scheme: options.scheme ?? DEFAULT_SCHEME,
    toleranceSeconds: positive('toleranceSeconds', options.toleranceSeconds ?? 300, 0),
    environment: options.environment,
    maxBodyBytes: positive('maxBodyBytes', options.maxBodyBytes ?? 65_536),
    mapEnvelope: options.mapEnvelope,
    logger: options.logger ?? defaultLogger(),
    owner: options.owner ?? defaultOwner(),
    leaseMs: positive('leaseMs', options.leaseMs ?? 30_000),
    maxAttempts: positive('maxAttempts', options.maxAttempts ?? 8),
    backoffMs: positive('backoffMs', options.backoffMs ?? 1000, 0),
    maxBackoffMs: positive('maxBackoffMs', options.maxBackoffMs ?? 600_000, 0),
    pollIntervalMs: positive('pollIntervalMs', options.pollIntervalMs ?? 1000),
    dispatchConcurrency: Math.floor(positive('dispatchConcurrency', options.dispatchConcurrency ?? DEFAULT_DISPATCH_CONCURRENCY)),
    dispatch: options.dispatch ?? true,
    retention,
    clock: options.clock ?? (() => new Date()),
    doctor: normalizeDoctorOptions(options.doctor, options.environment),
    merchantSecrets: options.merchantSecrets,
  };
}

/** The `store.prune` cut-offs for `now`. */
export function pruneCutoffs(retention: Required<RetentionOptions>, now: Date): { payloadsBefore: string; eventsBefore: string } {
  return {
    payloadsBefore: new Date(now.getTime() - retention.payloadDays * DAY_MS).toISOString(),
    eventsBefore: new Date(now.getTime() - retention.idDays * DAY_MS).toISOString(),
  };
}
