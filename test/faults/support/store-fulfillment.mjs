// The fulfillment module of the store fault scenarios. What its `paid` handler does depends on the
// payment's amount, so one serve can produce every kind of handler-run write:
//   11 → runs until the file STORE_FAULTS_RELEASE exists (the test creates it once it has seen the
//        event's lease renewed in the journal and read the store meanwhile), then returns;
//   13 → throws on its first attempt (a fail with a retry), returns on the next;
//   anything else → returns at once.
// Every call is one JSON line in STORE_FAULTS_LOG (when set), to count calls across processes.
import { appendFileSync, existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

const log = (entry) => {
  if (process.env.STORE_FAULTS_LOG) appendFileSync(process.env.STORE_FAULTS_LOG, `${JSON.stringify({ ...entry, pid: process.pid, at: Date.now() })}\n`);
};

export default {
  async paid(payment, ctx) {
    log({ step: 'start', id: payment.id, key: ctx.key, attempt: ctx.attempt });
    if (Number(payment.amount) === 11) {
      const release = process.env.STORE_FAULTS_RELEASE;
      if (!release) throw new Error('store-fulfillment.mjs needs STORE_FAULTS_RELEASE for a payment of 11 (the file whose creation lets the handler return)');
      while (!existsSync(release)) await sleep(50);
    }
    if (Number(payment.amount) === 13 && ctx.attempt === 1) {
      log({ step: 'throw', id: payment.id, key: ctx.key, attempt: ctx.attempt });
      throw new Error('store-fulfillment: first attempt fails on purpose');
    }
    log({ step: 'end', id: payment.id, key: ctx.key, attempt: ctx.attempt });
  },
};
