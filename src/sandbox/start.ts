import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { importOptionalPeer } from '../errors/index.js';
import { listenOn } from '../fastify/listen-on.js';
import type { SandboxContext } from './context.js';
import { credentialsOf, writeCredentials, type SandboxCredentials } from './credentials.js';
import { startExpiryTimer } from './expiry.js';
import { Idempotency } from './idempotency.js';
import { resolveOptions, type SandboxOptions } from './options.js';
import type { DeliveryRecord, SandboxEvent } from './records.js';
import { seedAccounts } from './seed.js';
import { SandboxState } from './state.js';
import { WebhookSender } from './webhooks/sender.js';

/** Deliveries kept in the state (oldest are dropped beyond this). */
export const MAX_DELIVERIES = 10_000;

/** A running sandbox. */
export interface SandboxHandle {
  /** e.g. `http://127.0.0.1:54321` (no trailing slash). */
  url: string;
  credentials: SandboxCredentials;
  /** `DATA/credentials.json`. */
  credentialsPath: string;
  /** Absolute data directory. */
  dataDir: string;
  /** Seed of the fault PRNG (pass it back as `faults.seed` to replay the same faults). */
  seed: number;
  /** Events emitted so far (also `GET /sandbox/events`). */
  events(): SandboxEvent[];
  /** Delivery attempts so far (also `GET /sandbox/deliveries`). */
  deliveries(): DeliveryRecord[];
  /** Resolves when every queued webhook has been delivered or given up. */
  webhooksIdle(): Promise<void>;
  /** Stop the server, abandon pending webhook retries, write the state and release the data directory. */
  close(): Promise<void>;
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * Start the sandbox: state from `dataDir` (seeded on first start), the HTTP server on loopback,
 * `credentials.json` written, the expiry timer and the webhook sender running.
 * @example
 * const sandbox = await startSandbox({ dataDir, webhookUrls: [receiverUrl] });
 * const client = new CheckoutClient({ baseUrl: sandbox.url, ...sandbox.credentials.test.merchant });
 * await sandbox.close();
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<SandboxHandle> {
  const resolved = resolveOptions(options);
  const dataDir = resolve(resolved.dataDir);
  // fastify loads when a sandbox starts: importing checkout-kit (which exports runCheck) loads none,
  // and without fastify, an optional peer, only starting a sandbox fails, before its folder is made.
  const { buildServer } = await importOptionalPeer('fastify', 'The sandbox', () => import('./server.js'));
  const state = await SandboxState.open(dataDir);
  try {
    if (seedAccounts(state.data, resolved.networks, new Date().toISOString())) await state.commit();
    const webhooks = new WebhookSender({
      urls: resolved.webhookUrls,
      secret: state.data.webhookSecret,
      // A merchant given its own webhook secret: events of its payments are signed with it.
      secretOf: (event) => {
        const merchantId = event.data.merchantId;
        return typeof merchantId === 'string' ? state.data.merchants.find((m) => m.merchantId === merchantId)?.webhookSecret : undefined;
      },
      faults: resolved.faults,
      retry: resolved.retry,
      logger: resolved.logger,
      record: (delivery) => {
        const { deliveries } = state.data;
        deliveries.push(delivery);
        if (deliveries.length > MAX_DELIVERIES) deliveries.splice(0, deliveries.length - MAX_DELIVERIES);
        state.commit().catch((error: unknown) => resolved.logger.error({ error: (error as Error).message }, 'could not record a webhook delivery'));
      },
    });
    const context: SandboxContext = { options: resolved, state, webhooks, idempotency: new Idempotency(() => state.data, resolved.createDelayMs), baseUrl: '' };
    const app = buildServer(context);
    await listenOn(app, { port: resolved.port, host: resolved.host }, 'the port option; on the command line --port or PORT');
    const { port } = app.server.address() as AddressInfo;
    context.baseUrl = `http://${urlHost(resolved.host)}:${port}`;
    const stopExpiry = startExpiryTimer(context, resolved.expiryCheckMs);
    const credentials = credentialsOf(state.data, context.baseUrl);
    const credentialsPath = await writeCredentials(dataDir, credentials);
    resolved.logger.info({ url: context.baseUrl, dataDir }, 'sandbox listening');

    let closing: Promise<void> | undefined;
    return {
      url: context.baseUrl,
      credentials,
      credentialsPath,
      dataDir,
      seed: resolved.faults.seed,
      events: () => [...state.data.events],
      deliveries: () => [...state.data.deliveries],
      webhooksIdle: () => webhooks.idle(),
      close: () =>
        (closing ??= (async () => {
          stopExpiry();
          webhooks.close();
          await app.close();
          await state.close();
        })()),
    };
  } catch (error) {
    await state.close().catch(() => undefined);
    throw error;
  }
}
