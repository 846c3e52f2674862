import { loadConfig } from '../config/index.js';
import type { FulfillmentHandler, FulfillmentHandlers } from '../fulfillment/index.js';
import type { Environment } from '../schemas/index.js';
import { HANDLER_OUTCOMES } from '../runs/index.js';
import { appendHandlerCall } from './handler-calls.js';

/** Where `recordHandlerCalls` appends, when not CHECKOUT_CHECK_RECORD's file. */
export interface RecordHandlerCallsOptions {
  /** The record file. @default CHECKOUT_CHECK_RECORD (environment, then `.env`); unset: nothing is recorded */
  file?: string | undefined;
  /** Nothing is recorded with live keys. @default the configured keys' environment */
  environment?: Environment | undefined;
}

const NAMES: ReadonlyArray<keyof FulfillmentHandlers> = HANDLER_OUTCOMES;

/**
 * Wrap a fulfillment module so each handler that returns is appended to a record file, for
 * `checkout-kit check` to count (it must be once per payment and outcome). Recording is on only when
 * the file is configured (CHECKOUT_CHECK_RECORD) and the keys are not live; otherwise the handlers
 * are called as they are. A handler that throws is not recorded (it will be retried).
 * @example export default recordHandlerCalls(defineFulfillment({ async paid(payment, ctx) {} }))
 */
export function recordHandlerCalls<T extends FulfillmentHandlers>(handlers: T, options: RecordHandlerCallsOptions = {}): T {
  let target: { file: string | undefined; ignoredLive: boolean } | undefined;
  let warned = false;
  // Read lazily: the module is imported before (and by tests without) any configuration.
  const resolveTarget = (): { file: string | undefined; ignoredLive: boolean } => {
    if (target) return target;
    let file = options.file;
    let environment = options.environment;
    if (file === undefined || environment === undefined) {
      try {
        const config = loadConfig();
        file ??= config.checkRecord;
        environment ??= config.environment;
      } catch {
        // The server reports a broken configuration itself; the record just stays off.
      }
    }
    target = { file: environment === 'live' ? undefined : file, ignoredLive: environment === 'live' && file !== undefined };
    return target;
  };
  const wrapped: FulfillmentHandlers = {};
  for (const name of NAMES) {
    const handler = handlers[name];
    if (!handler) continue;
    const recording: FulfillmentHandler = async (resource, ctx) => {
      await handler(resource, ctx);
      const { file, ignoredLive } = resolveTarget();
      if (ignoredLive && !warned) {
        warned = true;
        ctx.logger.warn({}, 'CHECKOUT_CHECK_RECORD is ignored with live keys: handler calls are recorded in test mode only.');
      }
      if (file === undefined) return;
      // The handler returned: a failed record write must not make it run again.
      await appendHandlerCall(file, {
        at: new Date().toISOString(),
        kind: ctx.kind,
        id: resource.id,
        outcome: ctx.outcome,
        handler: name,
        key: ctx.key,
        source: ctx.source,
        late: ctx.late,
        ...(ctx.tenantId === undefined ? {} : { tenantId: ctx.tenantId }),
        ...(typeof resource.referenceId === 'string' ? { referenceId: resource.referenceId } : {}),
      }).catch((error: unknown) => ctx.logger.warn({ err: String(error) }, `Could not record the handler call in ${file}: ${String(error)}`));
    };
    wrapped[name] = recording;
  }
  return wrapped as T;
}
