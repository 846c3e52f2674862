import { ApiError, describeFetchError, NetworkError } from '../errors/index.js';
import type { SandboxEvent } from '../sandbox/index.js';
import type { SimulationStep } from './scenarios.js';

/** The resource as a simulation endpoint answers it (Get payment after the change). */
export interface SimulatedResource {
  id: string;
  status: string;
  amount: string;
  amountReceived?: string;
}

async function call<T>(method: 'GET' | 'POST', url: string, operation: string, body?: unknown, timeoutMs = 15_000): Promise<T> {
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw new NetworkError(
      `${operation}: cannot reach the sandbox at ${new URL(url).origin} (${describeFetchError(error, url)}): is \`checkout-kit sandbox\` running there?`,
      { cause: error },
    );
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const error = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new ApiError({ status: response.status, code: error?.code ?? 'http_error', message: error?.message ?? text.slice(0, 200), operation, method, url });
  }
  return parsed as T;
}

/** A test payment or invoice of the sandbox. */
export interface SandboxResource {
  kind: 'payment' | 'invoice';
  id: string;
}

/**
 * One simulation call on `resource`: `POST /sandbox/{kind}s/{id}/deposit` `{ amount }`, or
 * `POST /sandbox/{kind}s/{id}/expire`. Answers the resource as Get returns it after the change.
 */
export function simulateStep(baseUrl: string, resource: SandboxResource, step: SimulationStep): Promise<SimulatedResource> {
  const url = `${baseUrl}/sandbox/${resource.kind}s/${encodeURIComponent(resource.id)}/${step.action}`;
  return step.action === 'deposit' ? call('POST', url, 'sandbox.deposit', { amount: step.amount }) : call('POST', url, 'sandbox.expire', {});
}

/** True when a sandbox answers at `baseUrl` within 2 s (its `GET /sandbox/deliveries`, asked about no event). */
export async function sandboxAnswers(baseUrl: string): Promise<boolean> {
  try {
    const answer = await call<unknown>('GET', `${baseUrl}/sandbox/deliveries?eventId=probe`, 'sandbox.probe', undefined, 2000);
    return Array.isArray(answer);
  } catch {
    return false;
  }
}

/** `GET /sandbox/events`: every event the sandbox emitted, oldest first. */
export function sandboxEvents(baseUrl: string): Promise<SandboxEvent[]> {
  return call('GET', `${baseUrl}/sandbox/events`, 'sandbox.events');
}
