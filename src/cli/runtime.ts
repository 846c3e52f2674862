import { clientFromConfig, type CheckoutClient } from '../client/index.js';
import { loadConfig, type CheckoutKitConfig } from '../config/index.js';
import { FulfillmentEngine, loadHandlers, type FulfillmentHandlers } from '../fulfillment/index.js';
import { createLogger, type Logger } from '../log/index.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/index.js';
import type { CliIO } from './io.js';

/** What most commands need, built from the configuration. */
export interface Runtime {
  config: CheckoutKitConfig;
  store: Store;
  /** Present when the base URL and a merchant or invoice key are configured. */
  client: CheckoutClient | undefined;
  engine: FulfillmentEngine;
  logger: Logger;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  /** Load the fulfillment module (`--handlers`, else CHECKOUT_HANDLERS, else ./fulfillment.*). */
  handlers?: boolean;
  handlersFile?: string | undefined;
}

/** Read the configuration, open the store, build the client and the engine. */
export async function openRuntime(io: CliIO, options: RuntimeOptions = {}): Promise<Runtime> {
  const config = loadConfig({ env: io.env, cwd: io.cwd });
  const logger = createLogger({ destination: io.stderr });
  const handlers: FulfillmentHandlers = options.handlers ? await loadHandlers(options.handlersFile ?? config.handlers, io.cwd) : {};
  const store = await openStore(config.store, { cwd: io.cwd });
  const client = clientFromConfig(config, logger);
  // The configured outcome rules, in every command: a tolerance known to `serve` but not to the
  // `reconcile` cron job would decide the same payment two ways (issue 11).
  const engine = new FulfillmentEngine({ store, client, handlers, logger, classify: config.outcomeRules });
  return { config, store, client, engine, logger, close: () => store.close() };
}
