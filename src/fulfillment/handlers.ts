import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError, importOptionalPeer, MissingPeerError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { HANDLER_OUTCOMES, isHandlerOutcome } from '../runs/index.js';
import type { InvoiceDetail, Payment } from '../schemas/index.js';
import type { NewsSource, ResourceKind } from '../store/index.js';
import { unlessStuck } from '../timers/index.js';
import type { Classification, HandlerOutcome } from './outcome.js';

/** What a fulfillment handler is told besides the resource. */
export interface FulfillmentContext {
  kind: ResourceKind;
  outcome: HandlerOutcome;
  /** Stable for this resource and outcome: use it as your own idempotency key downstream. */
  key: string;
  source: NewsSource;
  /** Paid after `expiresAt`. */
  late: boolean;
  /** 1 on the first call, more when an earlier call threw or its process died. */
  attempt: number;
  classification: Classification;
  /**
   * Partner platforms: the merchant the payment belongs to, as the service's confirmed read says
   * (never an event's body). Absent for a merchant's own payments.
   */
  merchantId?: string | undefined;
  /** Partner platforms: the tenant onboarded as that merchant (`checkout-kit merchants onboard`). */
  tenantId?: string | undefined;
  logger: Logger;
}

/** A handler: return to mark done (never called again for this resource and outcome), throw to retry. */
export type FulfillmentHandler = (resource: Payment | InvoiceDetail, ctx: FulfillmentContext) => Promise<void> | void;

/** The merchant's fulfillment module's default export. `paid` also gets overpaid resources when `overpaid` is absent. */
export type FulfillmentHandlers = { [Outcome in HandlerOutcome]?: FulfillmentHandler };

/** Identity function that types a fulfillment module. @example export default defineFulfillment({ async paid(payment, ctx) {} }) */
export function defineFulfillment<T extends FulfillmentHandlers>(handlers: T): T {
  return handlers;
}

/** The handler for an outcome, with `paid` standing in for a missing `overpaid`. */
export function handlerFor(handlers: FulfillmentHandlers, outcome: HandlerOutcome): FulfillmentHandler | undefined {
  return outcome === 'overpaid' ? (handlers.overpaid ?? handlers.paid) : handlers[outcome];
}

/** Check a module's default export has the fulfillment shape. */
export function assertHandlers(value: unknown, source: string): FulfillmentHandlers {
  if (value === null || typeof value !== 'object') {
    throw new ConfigError(`${source} must default-export an object with any of ${HANDLER_OUTCOMES.join(', ')}.`);
  }
  for (const [name, handler] of Object.entries(value)) {
    if (!isHandlerOutcome(name)) {
      throw new ConfigError(`${source} exports an unknown handler "${name}": use ${HANDLER_OUTCOMES.join(', ')}.`);
    }
    if (typeof handler !== 'function') throw new ConfigError(`${source}: handler "${name}" must be a function.`);
  }
  return value as FulfillmentHandlers;
}

/** The module names tried, in this order, when neither `CHECKOUT_HANDLERS` nor `--handlers` names one. */
export const DEFAULT_HANDLER_FILES = ['fulfillment.ts', 'fulfillment.mjs', 'fulfillment.js'];

/**
 * Load the merchant's fulfillment module: `file` if given, else the first default file found in
 * `cwd`. TypeScript modules are loaded through tsx.
 */
export async function loadHandlers(file: string | undefined, cwd = process.cwd()): Promise<FulfillmentHandlers> {
  const path = file ? resolve(cwd, file) : DEFAULT_HANDLER_FILES.map((name) => resolve(cwd, name)).find((candidate) => existsSync(candidate));
  if (!path) {
    throw new NoFulfillmentModuleError(
      `No fulfillment module: create ${DEFAULT_HANDLER_FILES.join(' / ')} in ${cwd} or set CHECKOUT_HANDLERS (or --handlers).`,
    );
  }
  if (!existsSync(path)) throw new ConfigError(`Fulfillment module ${path} does not exist (CHECKOUT_HANDLERS / --handlers).`);
  let module: { default?: unknown };
  try {
    module = (await unlessStuck(
      (async () => {
        if (!/\.[cm]?tsx?$/.test(path)) return import(pathToFileURL(path).href);
        const { tsImport } = await importOptionalPeer('tsx', `The TypeScript fulfillment module ${path}`, () => import('tsx/esm/api'));
        return tsImport(pathToFileURL(path).href, import.meta.url);
      })(),
      () =>
        new StuckModuleError(
          `The fulfillment module ${path} never finished loading: its top-level await waits for something that nothing left running can bring. Check what it awaits.`,
        ),
    )) as { default?: unknown };
  } catch (error) {
    // Already one line that says what to do: not wrapped in "Could not load".
    if (error instanceof StuckModuleError || error instanceof MissingPeerError) throw error;
    throw new ConfigError(`Could not load the fulfillment module ${path}: ${loadFailure(error, path)}`, { cause: error });
  }
  // tsx may wrap a CommonJS-style default once more.
  const exported = (module.default as { default?: unknown } | undefined)?.default ?? module.default;
  return assertHandlers(exported, path);
}

/** A module whose top-level await can never settle: one line, not wrapped in "Could not load". */
class StuckModuleError extends ConfigError {}

/** What Node says of `import` / `export` in a file it loads as CommonJS (a `.js` in a package without `"type": "module"`). */
const MODULE_SYNTAX_AS_COMMONJS = /^(Cannot use import statement outside a module|Unexpected token 'export')/;

/** Codes Node gives a CommonJS module that requires an ES-module-only package such as this one. */
const COMMONJS_CODES = new Set(['ERR_PACKAGE_PATH_NOT_EXPORTED', 'ERR_REQUIRE_ESM']);

/**
 * Why a module did not load, on one line (the CLI prints an error's first line): tsx puts the
 * file, line and reason of a syntax error on the lines after "Transform failed with 1 error:".
 * A module loaded as CommonJS cannot import checkout-kit: `npm init -y` (npm 11) writes
 * `"type": "commonjs"`, and Node's message does not say so.
 */
function loadFailure(error: unknown, path: string): string {
  const reason = String((error as Error)?.message ?? error)
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .join(' ');
  // Only a .js or .cjs file can have been loaded as CommonJS: in an .mjs, the same words are a plain syntax error.
  if ((error as Error | undefined)?.name === 'SyntaxError' && MODULE_SYNTAX_AS_COMMONJS.test(reason) && /\.c?js$/i.test(path)) {
    return `${reason}: the module is written with import / export but loaded as CommonJS (its package.json has no "type": "module"). Set it (npm pkg set type=module), name the module .mjs, or write it with require() and module.exports.`;
  }
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && COMMONJS_CODES.has(code)) {
    return `${reason}. The module was loaded as CommonJS, and checkout-kit is an ES module: set "type": "module" in package.json (npm pkg set type=module), or name the module .mts.`;
  }
  return reason;
}

/**
 * `loadHandlers` found no module: none was named and none of `DEFAULT_HANDLER_FILES` is there.
 * A class of its own because it alone may be meant: a backend that wires the engine into its own
 * code needs no module (serve and reconcile do), while one that names a module, or leaves one in
 * place, means it to load.
 */
export class NoFulfillmentModuleError extends ConfigError {}
