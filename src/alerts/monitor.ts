import { hostname } from 'node:os';
import { z } from 'zod';
import type { EngineObserver } from '../fulfillment/engine-observer.js';
import { createHealth } from '../health/readiness.js';
import { silentLogger, type Logger } from '../log/index.js';
import { StoreSnapshots } from '../metrics/store-snapshot.js';
import { verificationFailuresSince } from '../metrics/verification-log.js';
import type { Store } from '../store/index.js';
import { every } from '../timers/index.js';
import type { WebhookResult } from '../webhooks/receive/responses.js';
import { ALERT_KINDS, type Alert, type AlertKind } from './alert.js';
import { RULES, storeUnwritable, type AlertContext, type Finding } from './rules.js';
import { postAlert } from './slack.js';

/** The timeline subject incidents are recorded under (the console's log shows them). */
export const ALERTS_SUBJECT = 'alerts';
/** The lock one process holds while it checks, so that processes sharing a store raise each incident once. */
const ALERTS_LOCK = 'alerts';

/** What `createAlertMonitor` watches, where it sends alerts and its thresholds. */
export interface AlertMonitorOptions {
  store: Store;
  /** The engine's clock. @default () => new Date() */
  clock?: () => Date;
  /** Alerts are logged here too (warn when firing, info when resolved). @default silentLogger */
  logger?: Logger;
  /** `CHECKOUT_ALERT_URL`: a Slack-compatible incoming webhook. @default none */
  url?: string | undefined;
  /** Called with every alert (firing and resolved); errors are logged. */
  onAlert?: ((alert: Alert) => void | Promise<void>) | undefined;
  /** The console's address for links in alerts, e.g. `https://shop.example/checkout-kit`. */
  consoleUrl?: string | undefined;
  /** Whether a store write works (give the health check's `probeWrite` to share it). @default a probe of its own */
  probeWrite?: (() => Promise<{ ok: boolean; error?: string | undefined }>) | undefined;
  /** Called before each check, e.g. to write this receiver's verification counts first. */
  beforeCheck?: (() => Promise<void>) | undefined;
  /** How often conditions are checked. @default 30000 */
  checkEveryMs?: number;
  /** After a run fails for good or a delivery is refused, check this much later (a burst makes one alert). @default 10000 */
  groupWaitMs?: number;
  /** The backlog alert fires when the oldest undispatched event is older than this. @default 600000 (10 minutes) */
  backlogAgeMs?: number;
  /** The verification alert fires at this many failures within `verificationWindowMs`. @default 10 */
  verificationFailures?: number;
  /** @default 600000 (10 minutes) */
  verificationWindowMs?: number;
  /** Also send a message when an incident ends. @default true */
  sendResolved?: boolean;
  /** Lock owner. @default `alerts:<hostname>:<pid>` */
  owner?: string;
}

/** Raises each incident once across every process on the store; feed it the engine and the deliveries, then `start()`. */
export interface AlertMonitor {
  /** Give to the engine: a run failed for good brings the next check forward. */
  readonly engineObserver: EngineObserver;
  /** Call with each delivery's result: a refusal brings the next check forward. */
  observeDelivery(result: WebhookResult): void;
  /** Check every condition now; resolves with the alerts sent. */
  evaluate(): Promise<Alert[]>;
  /** Check every `checkEveryMs` (the timer does not keep the process alive). */
  start(): void;
  /** Stop the timer and wait for a check in progress. */
  stop(): Promise<void>;
}

const RecordedAlertSchema = z.looseObject({ alert: z.string(), state: z.enum(['firing', 'resolved']) });

/**
 * Watches for what puts fulfilment at risk and raises each incident once: a run failed
 * for good, a dispatch backlog that is too old, reconcile finding what webhooks missed,
 * verification failures above a rate, a store that takes no writes. Conditions are read from the
 * store, and which incidents are open is kept there (`alerts` timeline) under a lock, so every
 * process sharing a store agrees: 100 failing runs, or three receivers, make one alert.
 * @example
 * const monitor = createAlertMonitor({ store, url: process.env.CHECKOUT_ALERT_URL, onAlert: (alert) => page(alert) });
 * observers.add(monitor.engineObserver);
 * monitor.start();
 */
export function createAlertMonitor(options: AlertMonitorOptions): AlertMonitor {
  const clock = options.clock ?? (() => new Date());
  const logger = options.logger ?? silentLogger;
  const owner = options.owner ?? `alerts:${hostname()}:${process.pid}`;
  const snapshots = new StoreSnapshots(options.store, clock, 0);
  const limits = {
    backlogAgeMs: options.backlogAgeMs ?? 600_000,
    verificationFailures: options.verificationFailures ?? 10,
    verificationWindowMs: options.verificationWindowMs ?? 600_000,
  };
  const groupWaitMs = options.groupWaitMs ?? 10_000;
  /** Kept in memory only: a store that takes no writes cannot record its own incident. */
  let storeDown = false;
  let chain: Promise<Alert[]> = Promise.resolve([]);
  let soon: NodeJS.Timeout | undefined;
  let stopTimer: (() => Promise<void>) | undefined;

  // One write probe for readiness and this alert: the health check's, unless one is given.
  const probe = options.probeWrite ?? createHealth({ store: options.store, clock, owner }).probeWrite;

  async function send(kind: AlertKind, state: Alert['state'], finding: Finding): Promise<Alert> {
    const alert: Alert = { kind, state, ...finding, at: clock().toISOString() };
    // The details (the errors a run_failed quotes) go in the log line too: its "Next" refers to them.
    if (state === 'firing') logger.warn({ alert: kind, ...(alert.details ? { details: alert.details } : {}) }, `ALERT ${alert.title}. Next: ${alert.next}`);
    else logger.info({ alert: kind }, `resolved: ${alert.title}`);
    if (state === 'firing' || (options.sendResolved ?? true)) {
      if (options.url) await postAlert(options.url, alert, logger);
      if (options.onAlert) {
        try {
          await options.onAlert(alert);
        } catch (error) {
          logger.error({ alert: kind, err: String(error) }, `the onAlert hook threw: ${String(error)}`);
        }
      }
    }
    return alert;
  }

  /** Which kinds have an open incident, from the newest record of each. */
  async function openIncidents(): Promise<Set<string>> {
    const open = new Set<string>();
    const decided = new Set<string>();
    for (const entry of await options.store.listActivity({ subject: ALERTS_SUBJECT, limit: 200 })) {
      const recorded = RecordedAlertSchema.safeParse(entry.data);
      if (!recorded.success || decided.has(recorded.data.alert)) continue;
      decided.add(recorded.data.alert);
      if (recorded.data.state === 'firing') open.add(recorded.data.alert);
    }
    return open;
  }

  async function record(alert: Alert): Promise<void> {
    await options.store.appendActivity(
      { subject: ALERTS_SUBJECT, kind: 'alert', data: { alert: alert.kind, state: alert.state, title: alert.title, details: alert.details, next: alert.next } },
      clock(),
    );
  }

  async function check(): Promise<Alert[]> {
    const sent: Alert[] = [];
    await options.beforeCheck?.();
    const writable = await probe();
    if (!writable.ok) {
      if (!storeDown) sent.push(await send('store_unwritable', 'firing', storeUnwritable(writable.error)));
      storeDown = true;
      // Nothing else can be decided (or recorded) without the store.
      return sent;
    }
    if (storeDown) {
      storeDown = false;
      const alert = await send('store_unwritable', 'resolved', { title: 'the store takes writes again', details: '', next: '' });
      await record(alert).catch(() => undefined);
      sent.push(alert);
    }
    // One checker at a time across processes; the others skip this round.
    if (!(await options.store.acquireLock(ALERTS_LOCK, owner, 60_000, clock()))) return sent;
    try {
      const now = clock();
      const snapshot = await snapshots.get();
      const context: AlertContext = {
        now,
        snapshot,
        failedRuns:
          snapshot.summary.fulfillment.failed + snapshot.summary.dispatch.failed > 0
            ? await options.store.listRuns({ status: 'failed', limit: 3, newestFirst: true })
            : [],
        verification: await verificationFailuresSince(options.store, new Date(now.getTime() - limits.verificationWindowMs).toISOString()),
        consoleUrl: options.consoleUrl?.replace(/\/+$/, ''),
        limits,
      };
      const open = await openIncidents();
      for (const kind of ALERT_KINDS) {
        if (kind === 'store_unwritable') continue;
        const finding = RULES[kind](context);
        if (finding && !open.has(kind)) {
          const alert = await send(kind, 'firing', finding);
          await record(alert);
          sent.push(alert);
        } else if (!finding && open.has(kind)) {
          const alert = await send(kind, 'resolved', { title: resolvedTitle(kind), details: '', next: '' });
          await record(alert);
          sent.push(alert);
        }
      }
    } finally {
      await options.store.releaseLock(ALERTS_LOCK, owner, clock()).catch(() => undefined);
    }
    return sent;
  }

  /** Checks run one after the other, never two at once. */
  function evaluate(): Promise<Alert[]> {
    const next = chain.then(check, check);
    chain = next.catch((error: unknown) => {
      logger.error({ err: String(error) }, `the alert check failed: ${String(error)}`);
      return [];
    });
    return next;
  }

  /** Bring the next check forward to `groupWaitMs` from now (once per burst). */
  function checkSoon(): void {
    if (soon) return;
    soon = setTimeout(() => {
      soon = undefined;
      void evaluate().catch(() => undefined);
    }, groupWaitMs);
    soon.unref();
  }

  return {
    engineObserver: {
      handler(observation) {
        if (observation.result === 'failed') checkSoon();
      },
    },
    observeDelivery(result) {
      if (result.reason !== undefined || result.status === 503) checkSoon();
    },
    evaluate,
    start() {
      stopTimer ??= every(
        options.checkEveryMs ?? 30_000,
        () => evaluate(),
        (error) => logger.error({ err: String(error) }, `the alert check failed: ${String(error)}`),
      );
    },
    async stop() {
      if (soon) clearTimeout(soon);
      soon = undefined;
      await stopTimer?.();
      stopTimer = undefined;
      await chain;
    },
  };
}

function resolvedTitle(kind: AlertKind): string {
  const titles: Record<AlertKind, string> = {
    run_failed: 'no run is failed for good any more',
    dispatch_backlog: 'dispatch has caught up',
    missed_by_webhooks: 'the latest reconcile pass found nothing the webhooks missed',
    verification_failures: 'webhook deliveries verify again',
    store_unwritable: 'the store takes writes again',
  };
  return titles[kind];
}
