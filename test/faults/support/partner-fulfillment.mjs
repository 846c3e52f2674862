// The fulfillment module of the partner platform scenario: every call is one JSON line in
// PARTNER_LOG, with the tenant and merchant the engine gave it, to count calls across processes.
import { appendFileSync } from 'node:fs';

const log = (outcome) => async (payment, ctx) => {
  appendFileSync(
    process.env.PARTNER_LOG,
    `${JSON.stringify({ outcome, id: payment.id, referenceId: payment.referenceId, key: ctx.key, tenantId: ctx.tenantId ?? null, merchantId: ctx.merchantId ?? null, pid: process.pid })}\n`,
  );
};

export default { paid: log('paid'), overpaid: log('overpaid'), underpaid: log('underpaid'), expired: log('expired') };
