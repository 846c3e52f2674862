import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type CounterConfiguration, type GaugeConfiguration } from 'prom-client';
import type { EngineObserver } from '../fulfillment/engine-observer.js';
import { RESOURCE_KINDS } from '../runs/index.js';
import type { Store } from '../store/index.js';
import type { WebhookResult } from '../webhooks/receive/responses.js';
import { deliveryLabel } from './delivery-label.js';
import type { ServiceCalls } from './service-calls.js';
import { StoreSnapshots, type StoreSnapshot } from './store-snapshot.js';

/** The store the gauges read, the clock, and the client call counter. */
export interface MetricsOptions {
  store: Store;
  /** The clock of ages and timestamps (the engine's). @default () => new Date() */
  clock?: () => Date;
  /** The client's call counter (`ServiceCalls.onCall` given to the client), for the service's answers and 429s. */
  serviceCalls?: ServiceCalls | undefined;
  /** How long the store's counts are reused between scrapes. @default 5000 */
  storeCacheMs?: number;
  /** Node.js process metrics (prom-client's defaults: memory, event loop lag, …). @default true */
  processMetrics?: boolean;
}

/** The metrics of one process: fed by its receiver and engine, and read from the store at scrape time. */
export interface CheckoutMetrics {
  readonly registry: Registry;
  /** `Content-Type` of `render()`'s text. */
  readonly contentType: string;
  /** Give to the engine (`EngineObservers.add`): handler durations and outcomes. */
  readonly engineObserver: EngineObserver;
  /** Call with each delivery's result and how long it took to answer (see `observeDeliveries`). */
  observeDelivery(result: WebhookResult, durationMs?: number): void;
  /** The Prometheus text exposition. */
  render(): Promise<string>;
}

const HANDLER_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
/** Acknowledgements: a provider's timeout is typically 5–30 s, and a healthy store answers in milliseconds. */
const ACK_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const seconds = (ms: number) => ms / 1000;

/**
 * Prometheus metrics of checkout-kit, in a registry of their own (never prom-client's
 * global one: an app may run several receivers, and tests many). Counters come from what this
 * process sees; gauges of the backlog, runs, resources and reconcile passes come from the store,
 * so they agree across every process that shares it.
 * @example
 * const metrics = createMetrics({ store, clock: engine.clock });
 * observers.add(metrics.engineObserver);
 * app.get('/metrics', async (_req, reply) => reply.type(metrics.contentType).send(await metrics.render()));
 */
export function createMetrics(options: MetricsOptions): CheckoutMetrics {
  const clock = options.clock ?? (() => new Date());
  const registry = new Registry();
  const snapshots = new StoreSnapshots(options.store, clock, options.storeCacheMs ?? 5000);
  const registers = [registry];
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry });

  // Counted by this process, in this registry.
  const counter = <L extends string>(config: Omit<CounterConfiguration<L>, 'registers'>) => new Counter<L>({ ...config, registers });

  const deliveries = counter({
    name: 'checkout_kit_webhook_deliveries_total',
    help: 'Webhook deliveries answered, by result (stored, duplicate, or the error code) and HTTP status.',
    labelNames: ['result', 'status'],
  });
  const verificationFailures = counter({
    name: 'checkout_kit_webhook_verification_failures_total',
    help: 'Deliveries refused by signature verification, by reason (bad_signature after a secret rotation, timestamp_too_old for clock skew or replays, …).',
    labelNames: ['reason'],
  });
  const ackDuration = new Histogram({
    name: 'checkout_kit_webhook_ack_duration_seconds',
    help: 'Time the receiver took to answer a delivery (verify, store durably, answer), by HTTP status.',
    labelNames: ['status'] as const,
    buckets: ACK_BUCKETS,
    registers,
  });
  const eventsStored = counter({ name: 'checkout_kit_events_stored_total', help: 'Events stored for the first time (duplicates not counted).' });
  const handlerDuration = new Histogram({
    name: 'checkout_kit_handler_duration_seconds',
    help: "Duration of the merchant's fulfillment handler calls, by outcome and result.",
    labelNames: ['outcome', 'result'] as const,
    buckets: HANDLER_BUCKETS,
    registers,
  });
  const handlerCalls = counter({
    name: 'checkout_kit_handler_calls_total',
    help: 'Fulfillment handler calls by outcome (paid, overpaid, underpaid, expired) and result (completed, retrying, failed).',
    labelNames: ['outcome', 'result'],
  });
  const failedForGood = counter({
    name: 'checkout_kit_runs_failed_for_good_total',
    help: 'Fulfillment runs this process gave up on after their last attempt (waiting for a retry from the console or `checkout-kit retry`).',
  });

  // Read from the store at scrape time. Gauges are collected concurrently; they share one read.
  const snapshot = () => snapshots.get().catch(() => undefined);
  const storeGauge = <L extends string>(
    config: Omit<GaugeConfiguration<L>, 'registers' | 'collect'>,
    fill: (gauge: Gauge<L>, snapshot: StoreSnapshot) => void,
  ) =>
    new Gauge<L>({
      ...config,
      registers,
      async collect() {
        this.reset();
        const taken = await snapshot();
        if (taken) fill(this, taken);
      },
    });
  new Gauge({
    name: 'checkout_kit_store_up',
    help: '1 when the store answered the last scrape, 0 when it failed (the other store gauges are then absent).',
    registers,
    async collect() {
      this.set((await snapshot()) ? 1 : 0);
    },
  });
  storeGauge(
    { name: 'checkout_kit_dispatch_backlog', help: 'Stored events not dispatched yet, by status (pending, running).', labelNames: ['status'] },
    (gauge, { summary }) => {
      gauge.set({ status: 'pending' }, summary.dispatch.pending);
      gauge.set({ status: 'running' }, summary.dispatch.running);
    },
  );
  storeGauge(
    { name: 'checkout_kit_dispatch_oldest_pending_age_seconds', help: 'Age of the oldest event still waiting for dispatch (0 when none waits).' },
    (gauge, { summary, at }) => {
      const queued = summary.dispatch.oldestQueuedAt;
      gauge.set(queued === undefined ? 0 : Math.max(0, seconds(at.getTime() - Date.parse(queued))));
    },
  );
  storeGauge(
    {
      name: 'checkout_kit_runs',
      help: 'Runs still to do or failed for good, by kind (event dispatch, fulfillment handler) and status (pending, running, failed).',
      labelNames: ['kind', 'status'],
    },
    (gauge, { summary }) => {
      for (const status of ['pending', 'running', 'failed'] as const) {
        gauge.set({ kind: 'event', status }, summary.dispatch[status]);
        gauge.set({ kind: 'fulfillment', status }, summary.fulfillment[status]);
      }
    },
  );
  storeGauge(
    { name: 'checkout_kit_open_resources', help: 'Payments and invoices still awaiting an outcome or late money.', labelNames: ['kind'] },
    (gauge, { summary }) => {
      for (const kind of RESOURCE_KINDS) gauge.set({ kind }, summary.open[kind]);
    },
  );
  storeGauge(
    {
      name: 'checkout_kit_resources_learned_by_reconcile',
      help: 'Payments and invoices whose outcome reconcile learned before any webhook did (a sign the webhook endpoint is not reached).',
      labelNames: ['kind'],
    },
    (gauge, { summary }) => {
      for (const kind of RESOURCE_KINDS) gauge.set({ kind }, summary.learnedByReconcile[kind]);
    },
  );
  storeGauge({ name: 'checkout_kit_dead_letters', help: 'Verified deliveries that could not be parsed, kept for inspection.' }, (gauge, { summary }) =>
    gauge.set(summary.deadLetters),
  );
  storeGauge({ name: 'checkout_kit_reconcile_last_duration_seconds', help: 'Duration of the latest recorded reconcile pass.' }, (gauge, { lastPass }) => {
    if (lastPass) gauge.set(seconds(lastPass.durationMs));
  });
  storeGauge(
    {
      name: 'checkout_kit_reconcile_last_success_timestamp_seconds',
      help: 'When the latest reconcile pass that ran to its end finished (unix seconds); 0 before the first.',
    },
    (gauge, { lastSuccessfulPass }) => {
      if (lastSuccessfulPass) gauge.set(seconds(Date.parse(lastSuccessfulPass.at)));
    },
  );
  storeGauge(
    {
      name: 'checkout_kit_reconcile_last_missed_by_webhooks',
      help: 'Payments and invoices the latest reconcile pass fulfilled or closed before any webhook told of them.',
    },
    (gauge, { lastPass }) => {
      if (lastPass) gauge.set(lastPass.missedByWebhooks);
    },
  );

  counter({
    name: 'checkout_kit_service_requests_total',
    help: 'HTTP calls to the checkout service by operation (payments.get and invoices.get are the confirm reads) and status (429: rate limited; error: no answer; invalid_response: a success status with a body that does not match the spec).',
    labelNames: ['operation', 'status'],
    collect() {
      this.reset();
      for (const { operation, status, count } of options.serviceCalls?.snapshot() ?? []) this.inc({ operation, status }, count);
    },
  });

  return {
    registry,
    contentType: registry.contentType,
    engineObserver: {
      handler(observation) {
        const labels = { outcome: observation.outcome, result: observation.result };
        handlerDuration.observe(labels, seconds(observation.durationMs));
        handlerCalls.inc(labels);
        if (observation.result === 'failed') failedForGood.inc();
      },
    },
    observeDelivery(result, durationMs) {
      const label = deliveryLabel(result);
      deliveries.inc({ result: label, status: String(result.status) });
      if (durationMs !== undefined) ackDuration.observe({ status: String(result.status) }, seconds(durationMs));
      if (label === 'stored') eventsStored.inc();
      if (result.reason !== undefined) verificationFailures.inc({ reason: result.reason });
    },
    render: () => registry.metrics(),
  };
}
