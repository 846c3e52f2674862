import { clientFromConfig, configuresService, partnerFromConfig, type CheckoutClient, type PartnerClient } from '../client/index.js';
import { loadConfig, roleOf, type CheckoutKitConfig } from '../config/index.js';
import { readVariables } from '../config/environment.js';
import { ConfigError } from '../errors/index.js';
import { EngineObservers, FulfillmentEngine, loadHandlers, type FulfillmentEngineOptions, type FulfillmentHandlers } from '../fulfillment/index.js';
import { createLogger, lineGate, type LineGate, type Logger } from '../log/index.js';
import { ServiceCalls } from '../metrics/index.js';
import { createTimelineRecorder } from '../timeline/index.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/index.js';
import { SecretsBox, tenantReader } from '../partner/index.js';
import type { CliIO } from './io.js';

/** What most commands need, built from the configuration. */
export interface Runtime {
  config: CheckoutKitConfig;
  store: Store;
  /** Present when the base URL and a merchant or invoice key are configured. */
  client: CheckoutClient | undefined;
  /** A partner platform (partner keys, no merchant key): creates each tenant's payments and reads them. */
  partner: PartnerClient | undefined;
  /** `CHECKOUT_SECRETS_KEY`'s box: opens the tenants' own credentials a platform stores. */
  box: SecretsBox | undefined;
  engine: FulfillmentEngine;
  logger: Logger;
  /** Where the logger's lines go (stderr): a progress bar holds its last line while it is drawn. */
  logs: LineGate;
  /** Who watches the engine: the timeline recorder always; `serve` adds its metrics and alerts. */
  observers: EngineObservers;
  /** Every call the client made to the service, by operation and status (for `/metrics`). */
  serviceCalls: ServiceCalls;
  /** Waits for the timeline's writes, then closes the store. */
  close(): Promise<void>;
}

export interface RuntimeOptions {
  /** Load the fulfillment module (`--handlers`, else CHECKOUT_HANDLERS, else ./fulfillment.*). */
  handlers?: boolean;
  handlersFile?: string | undefined;
  /** A long-running process (`serve`): a PostgreSQL store opens its connections up front and keeps them. @default false */
  longRunning?: boolean;
  /**
   * Refuse with this `ConfigError` message when the configuration does not name the service
   * (`configuresService`), before the fulfillment module or the store is opened: a refusal leaves
   * nothing behind.
   */
  requireService?: string;
  /** Engine settings for programs that embed the CLI's runtime (and tests): attempts, backoff, clock. */
  engine?: Pick<FulfillmentEngineOptions, 'maxAttempts' | 'backoffMs' | 'clock'> | undefined;
}

/**
 * The merchant key and its signing secret work only together: with one of them, every payment read
 * and checkout would fail at the first call, while the process looked healthy.
 */
function refuseHalfMerchantPair(config: CheckoutKitConfig): void {
  const [set, missing] =
    config.apiKey && !config.signingSecret
      ? ['CHECKOUT_API_KEY', 'CHECKOUT_SIGNING_SECRET']
      : !config.apiKey && config.signingSecret
        ? ['CHECKOUT_SIGNING_SECRET', 'CHECKOUT_API_KEY']
        : [];
  if (set === undefined) return;
  throw new ConfigError(
    `${set} is set but ${missing} is not: the service takes the merchant key only on requests signed with its secret, so every payment read and checkout would fail. Set both (or neither, for invoices alone); \`checkout-kit doctor\` checks them.`,
  );
}

/** Read the configuration, open the store, build the client and the engine. */
export async function openRuntime(io: CliIO, options: RuntimeOptions = {}): Promise<Runtime> {
  const config = loadConfig({ env: io.env, cwd: io.cwd });
  // Logs share stderr with progress bars: through the gate, a line is written above a bar, never into it.
  const logs = lineGate(io.stderr);
  // From `.env` too, as every other variable: LOG_LEVEL=debug there must not be silently ignored.
  const variables = readVariables({ env: io.env, cwd: io.cwd });
  const logger = createLogger({ level: variables('LOG_LEVEL'), format: variables('LOG_FORMAT'), destination: logs, tty: io.stderr.isTTY ?? false });
  if (options.requireService !== undefined && !configuresService(config)) throw new ConfigError(options.requireService);
  // A partner platform holds no merchant key: a merchant's secret left beside its keys is not half a pair it uses.
  if (options.requireService !== undefined && roleOf(config) === 'merchant') refuseHalfMerchantPair(config);
  // A platform with CHECKOUT_SECRETS_KEY may store some tenants' own keys: their payments are read with them.
  // Checked before the store is opened, as the rest of the configuration.
  const box = config.secretsKey === undefined ? undefined : SecretsBox.fromVariable(config.secretsKey);
  const handlers: FulfillmentHandlers = options.handlers ? await loadHandlers(options.handlersFile ?? config.handlers, io.cwd) : {};
  const store = await openStore(config.store, { cwd: io.cwd, logger, warmPool: options.longRunning ?? false });
  const serviceCalls = new ServiceCalls();
  const client = clientFromConfig(config, logger, { onCall: serviceCalls.onCall });
  const partner = partnerFromConfig(config, logger, { onCall: serviceCalls.onCall });
  const reader = partner && box ? tenantReader({ store, partner, box, baseUrl: config.baseUrl! }) : partner;
  // Every command that learns news keeps each resource's timeline for the console.
  const observers = new EngineObservers();
  const timeline = createTimelineRecorder({ store, logger });
  observers.add(timeline);
  // The configured outcome rules, in every command: a tolerance known to `serve` but not to the
  // `reconcile` cron job would decide the same payment two ways.
  const leaseMs = config.handlerLeaseSeconds === undefined ? undefined : config.handlerLeaseSeconds * 1000;
  const engine = new FulfillmentEngine({
    leaseMs,
    ...options.engine,
    store,
    client: client ?? reader,
    handlers,
    logger,
    classify: config.outcomeRules,
    observer: observers,
  });
  return {
    config,
    store,
    client,
    partner,
    box,
    engine,
    logger,
    logs,
    observers,
    serviceCalls,
    async close() {
      await timeline.flush();
      await store.close();
    },
  };
}
