import { randomUUID } from 'node:crypto';
import type { Logger } from '../../src/log/index.js';
import { signWebhook } from '../../src/webhooks/index.js';

/** A fixed Standard Webhooks secret for tests (24 bytes, base64). */
export const SECRET = 'whsec_dGVzdC1zZWNyZXQtZm9yLWNoZWNrb3V0LWtpdA==';

export function paymentEvent(overrides: { id?: string; type?: string; environment?: 'test' | 'live'; amount?: string } = {}) {
  const paymentId = randomUUID();
  return {
    id: overrides.id ?? `evt_${randomUUID()}`,
    type: overrides.type ?? 'payment.paid',
    createdAt: '2025-01-02T03:04:05.000Z',
    environment: overrides.environment ?? 'test',
    data: {
      id: paymentId,
      status: 'PAID',
      environment: overrides.environment ?? 'test',
      amount: overrides.amount ?? '25.00',
      amountReceived: overrides.amount ?? '25.00',
      token: 'USDC',
      referenceId: 'order-1',
      expiresAt: '2025-01-02T04:04:05.000Z',
    },
  };
}

/** A signed delivery: headers (with content-type) and the exact body. */
export function signed(
  body: string,
  options: { id?: string; timestamp?: number; secret?: string | string[] } = {},
): { headers: Record<string, string>; body: string } {
  const headers = signWebhook({ id: options.id ?? `msg_${randomUUID()}`, timestamp: options.timestamp, body, secret: options.secret ?? SECRET });
  return { headers: { 'content-type': 'application/json', ...headers }, body };
}

export function signedEvent(event: object = paymentEvent(), options: { secret?: string | string[] } = {}) {
  return signed(JSON.stringify(event), options);
}

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  obj: object | string;
  msg: string | undefined;
}

/** A logger that records its lines, for asserting what operators would read. */
export function captureLogger(): Logger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: LogLine['level']) => (obj: object | string, msg?: string) => void lines.push({ level, obj, msg });
  const logger = { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  return logger;
}

/** Resolve once `check` is true (polling), or fail after `timeoutMs`. */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('waitFor: condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
