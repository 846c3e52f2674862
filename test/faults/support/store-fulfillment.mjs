// The fulfillment module of the store fault scenarios. What its `paid` handler does depends on the
// payment's amount, so one serve can produce every kind of handler-run write:
//   11 → sleeps STORE_FAULTS_SLOW_MS (default 12 s: past a third of the 30 s dispatch lease, so
//        the event's lease is renewed in the journal), then returns;
//   13 → throws on its first attempt (a fail with a retry), returns on the next;
//   anything else → returns at once.
// Every call is one JSON line in STORE_FAULTS_LOG (when set), to count calls across processes.
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

const log = (entry) => {
  if (process.env.STORE_FAULTS_LOG) appendFileSync(process.env.STORE_FAULTS_LOG, `${JSON.stringify({ ...entry, pid: process.pid, at: Date.now() })}\n`);
};

export default {
  async paid(payment, ctx) {
    log({ step: 'start', id: payment.id, key: ctx.key, attempt: ctx.attempt });
    if (Number(payment.amount) === 11) await sleep(Number(process.env.STORE_FAULTS_SLOW_MS ?? 12_000));
    if (Number(payment.amount) === 13 && ctx.attempt === 1) {
      log({ step: 'throw', id: payment.id, key: ctx.key, attempt: ctx.attempt });
      throw new Error('store-fulfillment: first attempt fails on purpose');
    }
    log({ step: 'end', id: payment.id, key: ctx.key, attempt: ctx.attempt });
  },
};
