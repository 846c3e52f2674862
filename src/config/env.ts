import { resolve } from 'node:path';
import { ConfigError } from '../errors/index.js';
import type { Environment } from '../schemas/index.js';
import type { WebhookScheme } from '../webhooks/schemes/scheme.js';
import { keyFormOf } from '../webhooks/schemes/registry.js';
import { checkKey, environmentOf } from './keys.js';
import { parseStatusMap, parseUnderpayTolerance, type OutcomeRules } from './outcome-rules.js';
import { CONNECTION_VARIABLES as NAMES } from './variables.js';
import { listOf, readVariables, registerSecrets, storeOf, type LoadConfigOptions } from './environment.js';
import { parseWebhookScheme } from './webhook-scheme.js';

export { DEFAULT_STORE, type LoadConfigOptions } from './environment.js';

/** Everything the `CHECKOUT_*` environment variables configure, normalised. */
export interface CheckoutKitConfig {
  /** `CHECKOUT_BASE_URL`, without a trailing slash. */
  baseUrl: string | undefined;
  apiKey: string | undefined;
  signingSecret: string | undefined;
  invoiceKey: string | undefined;
  partnerApiKey: string | undefined;
  partnerSigningSecret: string | undefined;
  /** `CHECKOUT_WEBHOOK_SECRET`, split on spaces and commas (several during rotation). */
  webhookSecrets: string[];
  /** `CHECKOUT_WEBHOOK_SCHEME`. @default { kind: 'standard-webhooks' } */
  webhookScheme: WebhookScheme;
  /** `CHECKOUT_STORE`. @default 'file:.checkout-kit' */
  store: string;
  /** `CHECKOUT_REDIRECT_HOSTS`. @default the host of `CHECKOUT_BASE_URL` */
  redirectHosts: string[];
  /** `CHECKOUT_PUBLIC_URL`: the shop's public URL for the buyer's success and cancel links. */
  publicUrl: string | undefined;
  /** `CHECKOUT_HANDLERS`, resolved against the working directory, if set. */
  handlers: string | undefined;
  /**
   * `CHECKOUT_UNDERPAY_TOLERANCE` and `CHECKOUT_STATUS_MAP`: the fulfillment engine's `classify`
   * option in every command, so all processes decide a payment alike.
   * @default { statusMap: { EXPIRED: 'closed' } } (no tolerance)
   */
  outcomeRules: OutcomeRules;
  /**
   * `CHECKOUT_MAX_RPS`: the calls a second the service allows this process, shared by every
   * caller (confirm reads, reconcile, checkout); calls are paced 5% under it (`RateLimiterOptions.headroom`).
   * @default 50 (see `CheckoutClientOptions.maxRps`)
   */
  maxRps: number | undefined;
  /** `CHECKOUT_DISPATCH_CONCURRENCY`: stored events dispatched at once by `serve`. @default 16 */
  dispatchConcurrency: number | undefined;
  /**
   * `CHECKOUT_HANDLER_LEASE`: seconds a worker holds a handler's run before another may take it
   * over (renewed every third of it while the handler runs; after a crash, the wait before the
   * handler is called again). @default 300
   */
  handlerLeaseSeconds: number | undefined;
  /** Environment of the configured keys (all must agree). */
  environment: Environment | undefined;
  port: number | undefined;
  host: string | undefined;
  /** `CHECKOUT_CONSOLE_TOKEN`: what the console and `/metrics` require of every request, this machine's too. @default none (this machine only, without a token) */
  consoleToken: string | undefined;
  /** `CHECKOUT_ALERT_URL`: a Slack-compatible incoming webhook alerts are posted to (a secret: never logged). @default none */
  alertUrl: string | undefined;
  /**
   * `CHECKOUT_MAX_BACKLOG_AGE` (seconds): `/readyz` is not ready, and the backlog alert fires, once
   * the oldest undispatched event is older than this. @default 600
   */
  maxBacklogAgeSeconds: number | undefined;
  /**
   * `CHECKOUT_CHECK_RECORD`, resolved against the working directory: the file a fulfillment module
   * wrapped in `recordHandlerCalls` appends each handler call to, for `checkout-kit check` (test
   * keys only). @default undefined (nothing recorded)
   */
  checkRecord: string | undefined;
  /** `CHECKOUT_SECRETS_KEY`: seals the tenants' own credentials a partner platform stores (see `SecretsBox`). @default none */
  secretsKey: string | undefined;
}

function positiveNumber(value: string | undefined, variable: string, expected: string, whole: boolean): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(value) || !(number > 0) || (whole && !Number.isInteger(number))) {
    throw new ConfigError(`${variable} "${value}" is not a positive ${whole ? 'whole ' : ''}number: give ${expected}.`);
  }
  return number;
}

/**
 * The shop's public URL (`CHECKOUT_PUBLIC_URL`, serve's `--public-url`) without trailing slashes;
 * null when it is not an http(s) URL with a host. One rule for the variable and the flag.
 */
export function publicUrlOf(text: string): string | null {
  const url = text.replace(/\/+$/, '');
  return /^https?:\/\/[^/]/.test(url) && URL.canParse(url) ? url : null;
}

/** The shortest `CHECKOUT_CONSOLE_TOKEN` accepted. */
export const MIN_CONSOLE_TOKEN_LENGTH = 24;

/** `raw` as a URL, or undefined. */
function urlOf(raw: string): URL | undefined {
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
}

/**
 * One `CHECKOUT_REDIRECT_HOSTS` entry as the redirect guard compares it (`url.host`: lower case,
 * punycode, no default port). A URL or a path in its place would match no checkout page, so every
 * checkout would be refused: it is refused here, naming the host to give.
 */
function redirectHost(entry: string): string {
  const host = urlOf(`https://${entry}`)?.host;
  if (host && !/[/?#@\\]/.test(entry)) return host;
  const meant = (urlOf(entry) ?? urlOf(`https://${entry}`))?.host;
  throw new ConfigError(
    `CHECKOUT_REDIRECT_HOSTS entry "${entry}" is not a host${meant ? `: give ${meant}` : ''} (a host such as pay.example.com, with :port when not 443).`,
  );
}

/**
 * Read and check the `CHECKOUT_*` configuration. Throws `ConfigError` for malformed
 * keys, keys of the wrong kind, or keys of mixed environments. Secrets are registered for redaction.
 */
export function loadConfig(options: LoadConfigOptions = {}): CheckoutKitConfig {
  const cwd = options.cwd ?? process.cwd();
  const get = readVariables(options);
  registerSecrets(get);

  const baseUrl = get(NAMES.baseUrl)?.replace(/\/+$/, '');
  if (baseUrl) {
    let url: URL;
    try {
      url = new URL(baseUrl);
    } catch {
      throw new ConfigError(`${NAMES.baseUrl} "${baseUrl}" is not a URL: give the service's base address, e.g. https://api.example.com.`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new ConfigError(`${NAMES.baseUrl} must be http(s), got ${url.protocol}`);
    }
  }

  const apiKey = get(NAMES.apiKey);
  const signingSecret = get(NAMES.signingSecret);
  const invoiceKey = get(NAMES.invoiceKey);
  const partnerApiKey = get(NAMES.partnerApiKey);
  const partnerSigningSecret = get(NAMES.partnerSigningSecret);
  const webhookSecrets = listOf(get(NAMES.webhookSecret));

  const environment = environmentOf([
    { variable: NAMES.apiKey, environment: apiKey ? checkKey('merchant-key', apiKey, NAMES.apiKey) : undefined },
    { variable: NAMES.invoiceKey, environment: invoiceKey ? checkKey('invoice-key', invoiceKey, NAMES.invoiceKey) : undefined },
    {
      variable: 'CHECKOUT_PARTNER_API_KEY',
      environment: partnerApiKey ? checkKey('partner-key', partnerApiKey, 'CHECKOUT_PARTNER_API_KEY') : undefined,
    },
  ]);
  if (signingSecret) checkKey('merchant-secret', signingSecret, NAMES.signingSecret);
  if (partnerSigningSecret) checkKey('partner-secret', partnerSigningSecret, 'CHECKOUT_PARTNER_SIGNING_SECRET');
  const webhookScheme = parseWebhookScheme(get('CHECKOUT_WEBHOOK_SCHEME'));
  // Only a whsec_ key (Standard Webhooks) fixes the secret's format; other schemes use the secret's bytes as given.
  if (keyFormOf(webhookScheme) === 'whsec-base64') for (const secret of webhookSecrets) checkKey('webhook-secret', secret, NAMES.webhookSecret);

  const store = storeOf(get);
  const consoleToken = get('CHECKOUT_CONSOLE_TOKEN');
  // It opens the console (payments, buyers' e-mails, Retry and Reconcile) to anyone who sends it.
  if (consoleToken !== undefined && consoleToken.length < MIN_CONSOLE_TOKEN_LENGTH) {
    throw new ConfigError(
      `CHECKOUT_CONSOLE_TOKEN is ${consoleToken.length} characters: use a random string of at least ${MIN_CONSOLE_TOKEN_LENGTH}, e.g. \`openssl rand -base64 32\`.`,
    );
  }

  const redirectHosts = listOf(get('CHECKOUT_REDIRECT_HOSTS')).map(redirectHost);
  if (redirectHosts.length === 0 && baseUrl) redirectHosts.push(new URL(baseUrl).host.toLowerCase());

  const port = get('PORT');
  if (port !== undefined && !/^[0-9]{1,5}$/.test(port)) throw new ConfigError(`PORT "${port}" is not a port number.`);

  const outcomeRules: OutcomeRules = {
    underpayTolerance: parseUnderpayTolerance(get('CHECKOUT_UNDERPAY_TOLERANCE')),
    statusMap: parseStatusMap(get('CHECKOUT_STATUS_MAP')),
  };

  const maxRps = positiveNumber(get('CHECKOUT_MAX_RPS'), 'CHECKOUT_MAX_RPS', 'calls a second, e.g. 50 or 0.5', false);
  const dispatchConcurrency = positiveNumber(get('CHECKOUT_DISPATCH_CONCURRENCY'), 'CHECKOUT_DISPATCH_CONCURRENCY', 'a whole number of events, e.g. 16', true);
  const handlerLeaseSeconds = positiveNumber(get('CHECKOUT_HANDLER_LEASE'), 'CHECKOUT_HANDLER_LEASE', 'seconds, e.g. 300', true);

  const alertUrl = get('CHECKOUT_ALERT_URL');
  if (alertUrl !== undefined && !(URL.canParse(alertUrl) && /^https?:$/.test(new URL(alertUrl).protocol))) {
    throw new ConfigError('CHECKOUT_ALERT_URL is not an http(s) URL: give a Slack-compatible incoming webhook URL (https://hooks.slack.com/services/…).');
  }
  const maxBacklogAgeSeconds = positiveNumber(get('CHECKOUT_MAX_BACKLOG_AGE'), 'CHECKOUT_MAX_BACKLOG_AGE', 'seconds, e.g. 600', true);

  const handlers = get('CHECKOUT_HANDLERS');
  const publicUrlText = get('CHECKOUT_PUBLIC_URL');
  const publicUrl = publicUrlText === undefined ? undefined : publicUrlOf(publicUrlText);
  if (publicUrl === null) throw new ConfigError(`CHECKOUT_PUBLIC_URL "${publicUrlText?.replace(/\/+$/, '')}" is not an http(s) URL.`);
  return {
    baseUrl,
    apiKey,
    signingSecret,
    invoiceKey,
    partnerApiKey,
    partnerSigningSecret,
    webhookSecrets,
    webhookScheme,
    store,
    redirectHosts,
    publicUrl,
    handlers: handlers ? resolve(cwd, handlers) : undefined,
    outcomeRules,
    maxRps,
    dispatchConcurrency,
    handlerLeaseSeconds,
    environment,
    port: port === undefined ? undefined : Number(port),
    host: get('HOST'),
    consoleToken,
    alertUrl,
    maxBacklogAgeSeconds,
    checkRecord: get('CHECKOUT_CHECK_RECORD') === undefined ? undefined : resolve(cwd, get('CHECKOUT_CHECK_RECORD')!),
    secretsKey: get('CHECKOUT_SECRETS_KEY'),
  };
}
