import { CheckoutClient } from '../client/index.js';
import { NetworkError } from '../errors/index.js';
import type { SandboxCredentials, SandboxEvent } from '../sandbox/index.js';
import { sandboxEvents, simulateStep, type SandboxResource } from './sandbox-api.js';
import type { SimulationStep } from './scenarios.js';

export interface DriveSandboxOptions {
  kind: SandboxResource['kind'];
  amount: string;
  /** Simulation calls made on the resource once created, in order. */
  steps: readonly SimulationStep[];
  referenceId: string;
  /** The running sandbox's `credentials.json`: its test merchant creates the resource. */
  credentials: SandboxCredentials;
  /** The sandbox's URL, without a trailing slash. */
  sandboxUrl: string;
}

export interface DrivenResource extends SandboxResource {
  /** Each simulation call with the status it left the resource in. */
  steps: Array<SimulationStep & { status: string }>;
  /** Events the sandbox emitted for the resource, oldest first. */
  events: SandboxEvent[];
  /** The resource as Get returns it at the end. */
  finalStatus: string;
  amountReceived: string | undefined;
}

/**
 * Create a test payment or invoice at a running sandbox as its test merchant, make the simulation
 * calls, then read back the events it emitted and the resource: real objects, which a receiver
 * configured for that sandbox confirms with a read that succeeds.
 */
export async function driveSandbox(options: DriveSandboxOptions): Promise<DrivenResource> {
  const { kind, amount, referenceId, sandboxUrl } = options;
  const { merchant } = options.credentials.test;
  const client = new CheckoutClient({
    baseUrl: sandboxUrl,
    apiKey: merchant.apiKey,
    signingSecret: merchant.signingSecret,
    invoiceKey: merchant.invoiceKey,
    retries: 1,
  });
  const created = await (
    kind === 'payment' ? client.payments.create({ amount, email: 'buyer@example.com', referenceId }) : client.invoices.create({ amount, referenceId })
  ).catch((error: unknown) => {
    // The client's message points at CHECKOUT_BASE_URL; here the sandbox is what is missing.
    if (error instanceof NetworkError)
      throw new NetworkError(`Cannot reach the sandbox at ${sandboxUrl}: is \`checkout-kit sandbox\` running? (${error.message})`, { cause: error });
    throw error;
  });
  const resource: SandboxResource = { kind, id: created.id };
  const steps: DrivenResource['steps'] = [];
  for (const step of options.steps) steps.push({ ...step, status: (await simulateStep(sandboxUrl, resource, step)).status });
  const events = (await sandboxEvents(sandboxUrl)).filter((event) => event.data.id === resource.id);
  const final = kind === 'payment' ? await client.payments.get(resource.id) : await client.invoices.get(resource.id);
  return { ...resource, steps, events, finalStatus: final.status, amountReceived: final.amountReceived };
}
