import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import { createAlertMonitor, type AlertMonitor } from '../alerts/index.js';
import { checkoutConsole } from '../console/index.js';
import { createHealth, healthRoutes, type Health } from '../health/index.js';
import { createMetrics, metricsRoute, VerificationLog, type CheckoutMetrics } from '../metrics/index.js';
import { reconcile } from '../reconcile/index.js';
import { every } from '../timers/index.js';
import type { WebhookResult } from '../webhooks/receive/responses.js';
import type { Runtime } from './runtime.js';

export interface OperationsOptions {
  /** Serve the console under `/checkout-kit` (`serve --console`; the `console` command always). */
  console: boolean;
  /** Run the alert monitor (`serve`: the process that sees deliveries). */
  alerts: boolean;
  /** This process's public address, for the replay URL offered and the links in alerts. */
  publicUrl: string;
  /** Whether the fulfillment module is loaded here: then retries run at once and "Reconcile now" is offered. */
  handlersLoaded: boolean;
  /** How often this receiver's verification counts are written for the console and alerts. @default 30000 */
  verificationFlushMs?: number;
}

/** Metrics, health, alerts and the console of one process, wired to its runtime. */
export interface Operations {
  metrics: CheckoutMetrics;
  health: Health;
  monitor: AlertMonitor | undefined;
  /** Give to `observeDeliveries` around the receiver. */
  observeDelivery(result: WebhookResult, durationMs?: number): void;
  /** Mount `/healthz`, `/readyz`, `/metrics` and (when asked) the console; start and stop the timers with the app. */
  register(app: FastifyInstance): Promise<void>;
}

export const CONSOLE_PREFIX = '/checkout-kit';

export function createOperations(runtime: Runtime, options: OperationsOptions): Operations {
  const { config, store, engine, logger, client, partner } = runtime;
  const clock = engine.clock;
  const backlogAgeMs = (config.maxBacklogAgeSeconds ?? 600) * 1000;
  const publicUrl = options.publicUrl.replace(/\/+$/, '');
  const metrics = createMetrics({ store, clock, serviceCalls: runtime.serviceCalls });
  runtime.observers.add(metrics.engineObserver);
  const health = createHealth({ store, clock, maxBacklogAgeMs: backlogAgeMs });
  const verificationLog = new VerificationLog({ store, clock, instance: `${hostname()}:${process.pid}`, logger });
  const monitor = options.alerts
    ? createAlertMonitor({
        store,
        clock,
        logger,
        url: config.alertUrl,
        consoleUrl: `${publicUrl}${CONSOLE_PREFIX}`,
        probeWrite: health.probeWrite,
        backlogAgeMs,
        beforeCheck: () => verificationLog.flush(),
      })
    : undefined;
  if (monitor) runtime.observers.add(monitor.engineObserver);

  return {
    metrics,
    health,
    monitor,
    observeDelivery(result, durationMs) {
      metrics.observeDelivery(result, durationMs);
      if (result.reason !== undefined) verificationLog.count(result.reason);
      monitor?.observeDelivery(result);
    },
    async register(app) {
      await app.register(healthRoutes, { health });
      await app.register(metricsRoute, { metrics, token: config.consoleToken });
      if (options.console) {
        const reads = client !== undefined || partner !== undefined;
        const canReconcile = reads && options.handlersLoaded;
        await app.register(checkoutConsole, {
          store,
          engine,
          basePath: CONSOLE_PREFIX,
          token: config.consoleToken,
          logger,
          outcomeRules: config.outcomeRules,
          runDue: options.handlersLoaded ? () => engine.runDue() : undefined,
          reconcile: canReconcile
            ? () =>
                reconcile({
                  store,
                  engine,
                  listInvoices: client && config.invoiceKey ? () => client.invoices.list() : undefined,
                  environment: config.environment,
                  logger,
                })
            : undefined,
          reconcileUnavailable: !reads
            ? "reconcile needs CHECKOUT_BASE_URL and CHECKOUT_API_KEY / CHECKOUT_SIGNING_SECRET, or the partner's CHECKOUT_PARTNER_API_KEY / CHECKOUT_PARTNER_SIGNING_SECRET"
            : 'no fulfillment module was loaded (CHECKOUT_HANDLERS)',
          replay:
            config.webhookSecrets.length > 0
              ? { secrets: config.webhookSecrets, scheme: config.webhookScheme, defaultUrl: `${publicUrl}/webhooks/checkout` }
              : undefined,
        });
      }
      let stopFlushing: (() => Promise<void>) | undefined;
      app.addHook('onReady', async () => {
        stopFlushing = every(
          options.verificationFlushMs ?? 30_000,
          () => verificationLog.flush(),
          (error) => logger.warn({ err: String(error) }, String(error)),
        );
        monitor?.start();
      });
      app.addHook('onClose', async () => {
        await monitor?.stop();
        await stopFlushing?.();
        await verificationLog.flush();
      });
    },
  };
}
