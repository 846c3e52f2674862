import { randomBytes } from 'node:crypto';
import { CheckoutClient, PartnerClient } from '../client/index.js';
import { deliverSigned } from '../devtools/deliver-signed.js';
import { simulateStep } from '../devtools/sandbox-api.js';
import { ConfigError, describeFetchError } from '../errors/index.js';
import { PortInUseError } from '../fastify/listen-on.js';
import type { HandlerOutcome } from '../fulfillment/outcome.js';
import { silentLogger } from '../log/index.js';
import { onboardMerchant } from '../partner/onboard-merchant.js';
import type { Store } from '../store/types.js';
import { startSandbox, type SandboxEvent, type SandboxHandle } from '../sandbox/index.js';
import { createOrder, waitReachable } from './create-order.js';
import { DELIVERY_PLANS, type PlanSender } from './delivery-plans.js';
import { evaluate, type EvaluationContext } from './evaluate.js';
import { HANDLER_OUTCOMES as OUTCOMES } from '../runs/index.js';
import { nothing, type Evidence, type Observed } from './evidence.js';
import type { CheckReport, ReconcileRun, ScenarioReport, SentDelivery } from './report.js';
import { CHECK_SCENARIO_NAMES, CHECK_SCENARIOS, PARTNER_SCENARIO_NAMES, type CheckScenario, type CheckScenarioSpec } from './scenarios.js';

/**
 * @example
 * await runCheck({ against: 'http://127.0.0.1:3000/webhooks/checkout', sandbox: { dataDir: '.sandbox', port: 4010 }, evidence })
 */
export interface CheckOptions {
  /** The backend's webhook URL. */
  against: string;
  /**
   * The backend's checkout route: `POST` `{ orderId, amount, email }` → 303 to the `checkoutUrl`.
   * When it answers a 4xx (no such route), or with `false`, payments are created at the sandbox directly (and a
   * lost webhook cannot be caught: the backend never heard of the payment).
   * @default the origin of `against` + `/checkout`
   */
  checkoutUrl?: string | false;
  /** The sandbox `check` starts (it delivers the webhooks itself, so it gets no webhook URL). */
  sandbox: { dataDir: string; port?: number };
  /** Where to read what the backend did. */
  evidence: Evidence;
  /** Runs the backend's reconcile pass once the webhooks settled. @default none (a lost webhook is then never caught) */
  reconcile?: (() => Promise<ReconcileRun>) | undefined;
  /** Start the backend, configured for the sandbox, once it runs. @default the backend already runs */
  startBackend?:
    | ((sandbox: SandboxHandle) => Promise<{
        /** Stop the backend. */
        stop(): Promise<void>;
        /** Why the backend exited, while it has; undefined while it runs. */
        exited(): string | undefined;
      }>)
    | undefined;
  /** The configuration the running backend reads, checked against the sandbox's credentials. */
  configured?: { webhookSecrets: readonly string[]; apiKey: string | undefined } | undefined;
  /**
   * A partner platform: check onboards two tenants into the backend's store (with the sandbox's
   * test partner), places their orders with `tenantId`, and runs the partner scenarios.
   */
  partner?: { store: Store } | undefined;
  /** @default every scenario (of a merchant backend, or with `partner` of a platform) */
  scenarios?: readonly CheckScenario[] | undefined;
  /** How long to wait for the handlers a scenario expects. @default 20000 */
  timeoutMs?: number | undefined;
  /** How long to keep watching once they ran, for calls that should not come. @default 1000 */
  settleMs?: number | undefined;
  /** How long a started backend may take to answer. @default 30000 */
  startTimeoutMs?: number | undefined;
  /** The clock signatures are made on. @default () => new Date() */
  clock?: (() => Date) | undefined;
  /** Progress lines. @default none */
  onProgress?: ((line: string) => void) | undefined;
}

interface ScenarioRun {
  name: CheckScenario;
  spec: CheckScenarioSpec;
  orderId: string;
  /** Partner checks: the tenant the order is for, and the other tenant's merchant (for a forged delivery). */
  tenantId: string | undefined;
  otherMerchantId: string | undefined;
  paymentId: string | undefined;
  createdVia: 'backend' | 'sandbox' | undefined;
  setupError: string | undefined;
  deliveries: SentDelivery[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Start the sandbox, with a clear error when its port or data folder is taken. */
async function openSandbox(options: CheckOptions['sandbox']): Promise<SandboxHandle> {
  try {
    return await startSandbox({ dataDir: options.dataDir, port: options.port ?? 0, webhookUrls: [], logger: silentLogger });
  } catch (error) {
    // startSandbox says a taken port as PortInUseError; check's own words name its own flag.
    if (error instanceof PortInUseError) {
      throw new ConfigError(
        `Port ${options.port} is taken: stop \`checkout-kit sandbox\` there (check starts its own on the same data and port, and delivers the webhooks itself), or give --sandbox-port.`,
      );
    }
    throw new ConfigError(`Could not start the sandbox in ${options.dataDir}: ${(error as Error).message}`, { cause: error });
  }
}

function checkConfigured(sandbox: SandboxHandle, configured: NonNullable<CheckOptions['configured']>): void {
  const { webhookSecret, test } = sandbox.credentials;
  if (configured.webhookSecrets.length > 0 && !configured.webhookSecrets.includes(webhookSecret)) {
    throw new ConfigError(
      `CHECKOUT_WEBHOOK_SECRET is not this sandbox's webhookSecret (${sandbox.credentialsPath}): the backend would refuse every delivery. Copy it into .env, or use --start.`,
    );
  }
  if (configured.apiKey !== undefined && configured.apiKey !== test.merchant.apiKey) {
    throw new ConfigError(
      `CHECKOUT_API_KEY is not this sandbox's test.merchant.apiKey (${sandbox.credentialsPath}): the backend could not read its payments. Copy it into .env, or use --start.`,
    );
  }
}

/**
 * Prove a backend against every scenario: start the sandbox, create one payment per scenario
 * (through the backend's checkout route when it has one), move its money, deliver its events as
 * the scenario's plan says (duplicated, reordered, dropped, stale, relabelled), run the backend's
 * reconcile, then read what the backend did and judge each scenario.
 */
export async function runCheck(options: CheckOptions): Promise<CheckReport> {
  const started = performance.now();
  const say = options.onProgress ?? (() => {});
  const clock = options.clock ?? (() => new Date());
  const timeoutMs = options.timeoutMs ?? 20_000;
  const settleMs = options.settleMs ?? 1000;
  const names = options.scenarios ?? (options.partner ? PARTNER_SCENARIO_NAMES : CHECK_SCENARIO_NAMES);
  const wrongKind = names.filter((name) => (CHECK_SCENARIOS[name].tenant !== undefined) !== (options.partner !== undefined));
  if (wrongKind.length > 0)
    throw new ConfigError(
      `${wrongKind.join(', ')}: ${options.partner ? 'not a partner scenario' : 'a partner scenario: give --partner'} (partner scenarios: ${PARTNER_SCENARIO_NAMES.join(', ')}).`,
    );
  const checkoutUrl = options.checkoutUrl === false ? undefined : (options.checkoutUrl ?? new URL('/checkout', options.against).href);

  // What answers there now is not the backend --start is about to start: that one could not listen, and check would prove the other.
  if (
    options.startBackend &&
    (await waitReachable(options.against, 0).then(
      () => true,
      () => false,
    ))
  ) {
    throw new ConfigError(
      `Something already answers at ${new URL(options.against).origin} (another backend, or an earlier one still running): check --start starts yours there. Stop it, or give --against a free port.`,
    );
  }
  const sandbox = await openSandbox(options.sandbox);
  let backend: Awaited<ReturnType<NonNullable<CheckOptions['startBackend']>>> | undefined;
  try {
    say(`sandbox on ${sandbox.url} (data ${sandbox.dataDir})`);
    if (options.configured) checkConfigured(sandbox, options.configured);
    if (options.startBackend) {
      backend = await options.startBackend(sandbox);
      say('backend started');
    }
    try {
      await waitReachable(options.against, options.startBackend ? (options.startTimeoutMs ?? 30_000) : 3000, () =>
        backend?.exited() ? `the backend ${backend.exited()}` : undefined,
      );
    } catch (error) {
      throw new ConfigError(
        `Cannot reach the backend at ${options.against}: ${(error as Error).message}. Start it (or give --start) and point --against at its webhook route.`,
      );
    }

    const { merchant } = sandbox.credentials.test;
    const client = new CheckoutClient({
      baseUrl: sandbox.url,
      apiKey: merchant.apiKey,
      signingSecret: merchant.signingSecret,
      retries: 1,
      logger: silentLogger,
    });
    const runId = randomBytes(3).toString('hex');
    const platform = options.partner ? await onboardTenants(sandbox, options.partner.store, runId) : undefined;
    if (platform) say(`onboarded tenants ${platform.a.tenantId} and ${platform.b.tenantId}`);
    let noCheckoutRoute: string | undefined = checkoutUrl === undefined ? 'no checkout route was given (--no-checkout)' : undefined;

    // One payment per scenario, one after the other: the first answer tells whether the backend has a checkout route.
    const runs: ScenarioRun[] = [];
    for (const name of names) {
      const spec = CHECK_SCENARIOS[name];
      const tenant = spec.tenant === undefined ? undefined : platform?.[spec.tenant];
      const other = spec.tenant === undefined ? undefined : platform?.[spec.tenant === 'a' ? 'b' : 'a'];
      const run: ScenarioRun = {
        name,
        spec,
        orderId: `check-${runId}-${spec.order ?? name}`,
        tenantId: tenant?.tenantId,
        otherMerchantId: other?.merchantId,
        paymentId: undefined,
        createdVia: undefined,
        setupError: undefined,
        deliveries: [],
      };
      runs.push(run);
      if (noCheckoutRoute === undefined && checkoutUrl !== undefined) {
        const result = await createOrder(checkoutUrl, { orderId: run.orderId, amount: spec.amount, email: 'buyer@example.com', tenantId: run.tenantId });
        if (result.kind === 'created') [run.paymentId, run.createdVia] = [result.paymentId, 'backend'];
        else if (result.kind === 'failed') run.setupError = `could not place the order through the backend's checkout route: ${result.reason}`;
        else noCheckoutRoute = `POST ${checkoutUrl} answered ${result.status}${result.answer}`;
      }
      if (run.paymentId === undefined && run.setupError === undefined) {
        const input = { amount: spec.amount, email: 'buyer@example.com', referenceId: run.orderId };
        const payment =
          tenant && platform ? await platform.client.payments.create({ ...input, merchantId: tenant.merchantId }) : await client.payments.create(input);
        [run.paymentId, run.createdVia] = [payment.id, 'sandbox'];
      }
    }
    say(
      `created ${runs.filter((run) => run.paymentId).length} payments ${noCheckoutRoute ? `at the sandbox (${noCheckoutRoute})` : "through the backend's checkout route"}`,
    );

    await Promise.all(runs.map((run) => driveScenario(run, sandbox, options.against, clock)));
    say('every scenario driven; waiting for the handlers');

    const ids = runs.flatMap((run) => (run.paymentId ? [run.paymentId] : []));
    const complete = (observed: Map<string, Observed>, caughtBy: CheckScenarioSpec['caughtBy']) =>
      runs.every(
        (run) =>
          run.spec.caughtBy !== caughtBy ||
          run.paymentId === undefined ||
          OUTCOMES.every((outcome) => run.spec.handlers[outcome] !== 'once' || (observed.get(run.paymentId!)?.calls[outcome].length ?? 0) > 0),
      );
    const settle = async (caughtBy: CheckScenarioSpec['caughtBy']) => {
      const deadline = performance.now() + timeoutMs;
      let observed = await options.evidence.read(ids);
      while (!complete(observed, caughtBy) && performance.now() < deadline) {
        await sleep(100);
        observed = await options.evidence.read(ids);
      }
      // Watch a little longer for calls that must not come (a second run, a wrong outcome).
      await sleep(settleMs);
      return options.evidence.read(ids);
    };
    const beforeReconcile = await settle('webhook');

    let reconcile: ReconcileRun | undefined;
    let final = beforeReconcile;
    if (options.reconcile && runs.some((run) => run.spec.caughtBy === 'reconcile')) {
      reconcile = await options.reconcile();
      say(`reconcile: ${reconcile.ok ? 'done' : 'failed'}`);
      final = await settle('reconcile');
    }

    const context: EvaluationContext = {
      evidence: { kind: options.evidence.kind, description: options.evidence.description },
      reconcile,
      noCheckoutRoute,
      timeoutMs,
    };
    const scenarios: ScenarioReport[] = runs.map((run) => {
      const observation = {
        spec: run.spec,
        paymentId: run.paymentId,
        createdVia: run.createdVia,
        setupError: run.setupError,
        deliveries: run.deliveries,
        beforeReconcile: (run.paymentId && beforeReconcile.get(run.paymentId)) || nothing(),
        final: (run.paymentId && final.get(run.paymentId)) || nothing(),
      };
      const causes = evaluate({ ...observation, tenantId: run.tenantId }, context);
      return {
        scenario: run.name,
        summary: run.spec.summary,
        delivery: DELIVERY_PLANS[run.spec.delivery].summary,
        orderId: run.orderId,
        ...(run.tenantId === undefined ? {} : { tenantId: run.tenantId }),
        paymentId: run.paymentId,
        createdVia: run.createdVia,
        expected: run.spec.handlers,
        calls: Object.fromEntries(OUTCOMES.map((outcome) => [outcome, observation.final.calls[outcome].length])) as Record<HandlerOutcome, number>,
        deliveries: run.deliveries,
        causes,
        ok: causes.length === 0,
      };
    });
    return {
      ok: scenarios.every((scenario) => scenario.ok),
      against: options.against,
      sandboxUrl: sandbox.url,
      evidence: options.evidence.description,
      orders: noCheckoutRoute ? `created at the sandbox (${noCheckoutRoute})` : `placed through the backend's checkout route ${checkoutUrl}`,
      reconcile,
      scenarios,
      durationMs: Math.round(performance.now() - started),
    };
  } finally {
    await backend?.stop();
    await sandbox.close();
  }
}

/** One tenant a partner check onboarded, and its merchant at the sandbox. */
interface CheckTenant {
  tenantId: string;
  merchantId: string;
}

/** Two tenants onboarded into the backend's store by the sandbox's test partner, as `merchants onboard` would. */
async function onboardTenants(sandbox: SandboxHandle, store: Store, runId: string): Promise<{ a: CheckTenant; b: CheckTenant; client: PartnerClient }> {
  const client = new PartnerClient({ baseUrl: sandbox.url, ...sandbox.credentials.test.partner, retries: 1, logger: silentLogger });
  const onboard = async (name: 'a' | 'b'): Promise<CheckTenant> => {
    const tenantId = `check-${runId}-${name}`;
    const { tenant } = await onboardMerchant({ store, partner: client }, { tenantId, name: `check tenant ${name}`, email: `tenant-${name}@example.com` });
    return { tenantId, merchantId: tenant.merchantId! };
  };
  return { a: await onboard('a'), b: await onboard('b'), client };
}

/** Move one scenario's money at the sandbox and deliver its events by its plan. */
async function driveScenario(run: ScenarioRun, sandbox: SandboxHandle, against: string, clock: () => Date): Promise<void> {
  const paymentId = run.paymentId;
  if (paymentId === undefined) return;
  const plan = DELIVERY_PLANS[run.spec.delivery];
  const seen = new Set<string>();
  const all: SandboxEvent[] = [];
  const fresh = () => {
    const events = sandbox.events().filter((event) => event.data.id === paymentId && !seen.has(event.id));
    for (const event of events) seen.add(event.id);
    all.push(...events);
    return events;
  };
  const sender: PlanSender = {
    otherMerchantId: run.otherMerchantId,
    async send(event, { ageSeconds = 0 } = {}) {
      const timestamp = Math.floor(clock().getTime() / 1000) - ageSeconds;
      const result = await deliverSigned({ url: against, secret: sandbox.credentials.webhookSecret }, { id: event.id, body: JSON.stringify(event), timestamp });
      run.deliveries.push({
        eventId: event.id,
        type: event.type,
        expected: ageSeconds > 0 ? 'refuse' : 'accept',
        signedSecondsAgo: ageSeconds,
        status: result.status,
        accepted: result.ok,
        code: result.answer?.code ?? (result.status === undefined ? 'no_answer' : undefined),
        message: result.answer?.message,
      });
    },
  };
  try {
    await plan.afterStep?.(fresh(), sender);
    for (const step of run.spec.steps) {
      await simulateStep(sandbox.url, { kind: 'payment', id: paymentId }, step);
      await plan.afterStep?.(fresh(), sender);
    }
    fresh();
    await plan.afterAll?.(all, sender);
  } catch (error) {
    run.setupError = `could not drive the scenario at the sandbox: ${error instanceof Error ? error.message : describeFetchError(error)}`;
  }
}
