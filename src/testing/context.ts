import { classify } from '../fulfillment/index.js';
import type { FulfillmentContext, HandlerOutcome } from '../fulfillment/index.js';
import { silentLogger } from '../log/index.js';
import type { InvoiceDetail, Payment } from '../schemas/index.js';

/** A handler context for calling a fulfillment handler directly in a unit test. */
export function fulfillmentContext(resource: Payment | InvoiceDetail, overrides: Partial<FulfillmentContext> = {}): FulfillmentContext {
  const classification = classify(resource);
  const outcome: HandlerOutcome = overrides.outcome ?? (classification.outcome === 'pending' ? 'paid' : classification.outcome);
  const kind = overrides.kind ?? ('depositAddresses' in resource || !('addresses' in resource) ? 'payment' : 'invoice');
  return {
    kind,
    outcome,
    key: `${kind}:${resource.id}:${outcome}`,
    source: 'webhook',
    late: classification.late,
    attempt: 1,
    classification,
    logger: silentLogger,
    ...overrides,
  };
}
