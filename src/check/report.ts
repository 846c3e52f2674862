import type { HandlerOutcome } from '../fulfillment/outcome.js';
import type { CheckScenario, Expectation } from './scenarios.js';

/** One delivery `check` made, with what it expected. */
export interface SentDelivery {
  eventId: string;
  type: string;
  /** `refuse` for a delivery signed outside any tolerance; every other delivery is genuine. */
  expected: 'accept' | 'refuse';
  signedSecondsAgo: number;
  /** Undefined when no answer came. */
  status: number | undefined;
  /** A 2xx answer. */
  accepted: boolean;
  /** The answer's error code and message, or the network error. */
  code: string | undefined;
  message: string | undefined;
}

/** How one scenario went: what was sent, what the backend did, and what to change when it failed. */
export interface ScenarioReport {
  scenario: CheckScenario;
  summary: string;
  /** How the events were delivered. */
  delivery: string;
  orderId: string;
  /** Partner checks: the tenant the order was placed for. */
  tenantId?: string | undefined;
  paymentId: string | undefined;
  /** `backend`: through its checkout route; `sandbox`: created at the sandbox directly. */
  createdVia: 'backend' | 'sandbox' | undefined;
  expected: Partial<Record<HandlerOutcome, Expectation>>;
  /** Handler calls seen per outcome at the end. */
  calls: Record<HandlerOutcome, number>;
  deliveries: SentDelivery[];
  /** Empty when the scenario held; otherwise each thing that went wrong, with what to change. */
  causes: string[];
  ok: boolean;
}

/** The outcome of the backend's reconcile pass, as `CheckOptions.reconcile` reports it. */
export interface ReconcileRun {
  /** The command, as shown. */
  command: string;
  ok: boolean;
  /** Exit code and output tail when it failed; the summary when it worked. */
  detail: string;
}

/** `runCheck`'s result: every scenario's report and whether all passed. */
export interface CheckReport {
  ok: boolean;
  against: string;
  sandboxUrl: string;
  /** Where the handler calls were read. */
  evidence: string;
  /** How the payments were created: through the backend's checkout route, or at the sandbox (and why). */
  orders: string;
  /** `undefined`: no reconcile ran. */
  reconcile: ReconcileRun | undefined;
  scenarios: ScenarioReport[];
  durationMs: number;
}
