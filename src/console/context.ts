import { ConfigError } from '../errors/index.js';
import type { ClassifyOptions, FulfillmentEngine } from '../fulfillment/index.js';
import { silentLogger, type Logger } from '../log/index.js';
import type { ReconcileSummary } from '../reconcile/index.js';
import type { Store } from '../store/index.js';
import type { WebhookScheme } from '../webhooks/schemes/scheme.js';
import { CsrfTokens } from './csrf.js';
import { OnceOnly } from './once.js';

/** How an action ended, as the result page shows it and the log keeps it. */
export interface ActionOutcome {
  ok: boolean;
  /** One sentence: what was done, or why nothing was. */
  message: string;
}

/**
 * @example
 * await app.register(checkoutConsole, { store, engine, token: process.env.CHECKOUT_CONSOLE_TOKEN, replay: { secrets } });
 */
export interface ConsoleOptions {
  store: Store;
  /**
   * Where the pages live. (Not `prefix`: fastify takes that register option for itself.)
   * @default '/checkout-kit'
   */
  basePath?: string;
  /** `CHECKOUT_CONSOLE_TOKEN`: when set, needed by every request, this machine's too. @default none (this machine only, without a token) */
  token?: string | undefined;
  /** The engine's clock. @default () => new Date() */
  clock?: () => Date;
  /** Every action is logged here (info). @default silentLogger */
  logger?: Logger;
  /** The engine, whose outcome rules classify the detail views. */
  engine?: FulfillmentEngine | undefined;
  /** `CHECKOUT_UNDERPAY_TOLERANCE` / `CHECKOUT_STATUS_MAP`, as the engine classifies. @default the defaults */
  outcomeRules?: Omit<ClassifyOptions, 'now'> | undefined;
  /** After a run is put back in line, start due runs now (serve: `() => engine.runDue()`); without it they wait for the next sweep. */
  runDue?: (() => Promise<unknown>) | undefined;
  /** "Reconcile now". Absent: the button says `reconcileUnavailable`. */
  reconcile?: (() => Promise<ReconcileSummary>) | undefined;
  /** Why "Reconcile now" is not offered. @default 'reconcile needs CHECKOUT_BASE_URL and an API key' */
  reconcileUnavailable?: string | undefined;
  /** "Replay to URL": the secrets and scheme replays are signed with (never shown), and the URL offered first. */
  replay?: { secrets: readonly string[]; scheme?: WebhookScheme | undefined; defaultUrl?: string | undefined } | undefined;
  /** Rows per page of every list. @default 50 */
  pageSize?: number;
}

/** The options normalised once, plus the console's own state. */
export interface ConsoleContext {
  store: Store;
  prefix: string;
  token: string | undefined;
  clock: () => Date;
  logger: Logger;
  outcomeRules: Omit<ClassifyOptions, 'now'>;
  runDue: (() => Promise<unknown>) | undefined;
  reconcile: (() => Promise<ReconcileSummary>) | undefined;
  reconcileUnavailable: string;
  replay: { secrets: readonly string[]; scheme: WebhookScheme | undefined; defaultUrl: string | undefined } | undefined;
  pageSize: number;
  csrf: CsrfTokens;
  once: OnceOnly<ActionOutcome>;
  /** Background work started by actions (a due-run sweep), awaited on close. */
  track(work: Promise<unknown>): void;
  /** Resolves once the background work started so far has finished (the plugin's onClose). */
  settle(): Promise<void>;
}

/** The console's options with their defaults, checked once. */
export function consoleContext(options: ConsoleOptions): ConsoleContext {
  const prefix = (options.basePath ?? '/checkout-kit').replace(/\/+$/, '');
  if (prefix !== '' && !/^\/[A-Za-z0-9._~\-/]+$/.test(prefix))
    throw new ConfigError(`The console's basePath "${prefix}" must be a path such as /checkout-kit.`);
  const pageSize = options.pageSize ?? 50;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000)
    throw new ConfigError(`The console's pageSize must be a whole number from 1 to 1000, got ${pageSize}.`);
  const background = new Set<Promise<unknown>>();
  const logger = options.logger ?? silentLogger;
  return {
    store: options.store,
    prefix,
    token: options.token || undefined,
    clock: options.clock ?? options.engine?.clock ?? (() => new Date()),
    logger,
    outcomeRules: options.outcomeRules ?? {},
    runDue: options.runDue,
    reconcile: options.reconcile,
    reconcileUnavailable: options.reconcileUnavailable ?? 'reconcile needs CHECKOUT_BASE_URL and an API key',
    replay: options.replay ? { secrets: options.replay.secrets, scheme: options.replay.scheme, defaultUrl: options.replay.defaultUrl } : undefined,
    pageSize,
    csrf: new CsrfTokens(),
    once: new OnceOnly(),
    track(work) {
      const tracked = work.catch((error: unknown) => logger.error({ err: String(error) }, `console background work failed: ${String(error)}`));
      background.add(tracked);
      void tracked.finally(() => background.delete(tracked));
    },
    async settle() {
      while (background.size > 0) await Promise.allSettled([...background]);
    },
  };
}
