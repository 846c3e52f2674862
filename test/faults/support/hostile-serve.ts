import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { samplePayment } from '../../../src/testing/index.js';
import { signWebhook } from '../../../src/webhooks/index.js';

/**
 * Raw-socket abuse of a real `checkout-kit serve` (127.0.0.1 only) and the measurements around
 * it: resident memory from /proc, delivery latencies, every status the server answered.
 */

/**
 * A fulfillment module that records each call as a JSON line in $HOSTILE_CALLS, with a prototype-pollution
 * probe; a payment listed in $HOSTILE_HOLD_IDS keeps its handler running $HOSTILE_HOLD_MS after the record.
 */
export const RECORDING_HANDLERS = `
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
const held = new Set((process.env.HOSTILE_HOLD_IDS ?? '').split(',').filter(Boolean));
const record = (outcome) => async (resource, ctx) => {
  appendFileSync(process.env.HOSTILE_CALLS, JSON.stringify({
    outcome, key: ctx.key, id: resource.id, source: ctx.source,
    amount: resource.amount, amountReceived: resource.amountReceived,
    polluted: ({}).polluted ?? null, protoKeys: Object.keys(Object.prototype),
    ownProto: Object.prototype.hasOwnProperty.call(resource, '__proto__'),
  }) + '\\n');
  // Recorded, then still running for HOSTILE_HOLD_MS: news of these payments arrives mid-handler.
  if (held.has(resource.id)) await sleep(Number(process.env.HOSTILE_HOLD_MS ?? 0));
};
export default { paid: record('paid'), overpaid: record('overpaid'), underpaid: record('underpaid'), expired: record('expired') };
`;

export interface HandlerCall {
  outcome: string;
  key: string;
  id: string;
  source: string;
  amount?: string;
  amountReceived?: string;
  polluted: unknown;
  protoKeys: string[];
  ownProto: boolean;
}

export function readCalls(file: string): HandlerCall[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as HandlerCall);
}

/** Resident set size of a process in bytes (VmRSS of /proc/<pid>/status). */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS for ${pid}`);
  return Number(match[1]) * 1024;
}

export const MB = 1024 * 1024;

export { percentile } from '../../support/percentile.js';

/** Stop a child: SIGTERM, SIGKILL after `graceMs`; resolves with its exit code. */
export { stopProcess as stopChild } from '../../support/cli.js';

/** A signed `payment.paid` delivery (body and headers) for a paid test payment. */
export function paidDelivery(secret: string, overrides: { eventId?: string; paymentId?: string; extra?: string; dataExtra?: string } = {}) {
  const payment = samplePayment({ id: overrides.paymentId ?? randomUUID(), status: 'PAID', amount: '10.00', amountReceived: '10.00', remaining: '0' });
  const eventId = overrides.eventId ?? `evt_${randomUUID()}`;
  let data = JSON.stringify(payment);
  if (overrides.dataExtra) data = `${data.slice(0, -1)},${overrides.dataExtra}}`;
  const body = `{"id":${JSON.stringify(eventId)},"type":"payment.paid","createdAt":${JSON.stringify(new Date().toISOString())},"environment":"test","data":${data}${overrides.extra ? `,${overrides.extra}` : ''}}`;
  const headers = { 'content-type': 'application/json', ...signWebhook({ id: eventId, body, secret }) };
  return { eventId, paymentId: payment.id, body, headers };
}

/** Open sockets, closed by `closeAll` (every socket of the test, whatever happened to it). */
export class SocketPool {
  readonly sockets = new Set<Socket>();
  /** Sockets the server closed (or reset) before we did. */
  closedByServer = 0;
  private readonly closing = new WeakSet<Socket>();

  open(port: number): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port });
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.once('close', () => {
        if (!this.closing.has(socket)) this.closedByServer += 1;
        this.sockets.delete(socket);
      });
      socket.once('connect', () => resolve(socket));
      socket.once('error', reject);
    });
  }

  async close(socket: Socket): Promise<void> {
    this.closing.add(socket);
    if (socket.destroyed) return;
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.destroy();
    await closed;
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.sockets].map((socket) => this.close(socket)));
  }
}

/** The status code of the first HTTP response on `socket` (undefined if it closes without one). */
export function firstStatus(socket: Socket, timeoutMs = 15_000): Promise<{ status: number | undefined; head: string }> {
  return new Promise((resolve) => {
    let text = '';
    const done = (status: number | undefined) => {
      clearTimeout(timer);
      socket.off('data', onData);
      resolve({ status, head: text.slice(0, 300) });
    };
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      if (match) done(Number(match[1]));
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    socket.on('data', onData);
    socket.once('close', () => done(/^HTTP\/1\.[01] (\d{3})/.exec(text) ? Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)![1]) : undefined));
  });
}

/** Write with backpressure; false when the socket closed meanwhile. */
export function writeAll(socket: Socket, data: Buffer | string): Promise<boolean> {
  if (socket.destroyed || !socket.writable) return Promise.resolve(false);
  if (socket.write(data)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onDrain = () => {
      socket.off('close', onClose);
      resolve(true);
    };
    const onClose = () => {
      socket.off('drain', onDrain);
      resolve(false);
    };
    socket.once('drain', onDrain);
    socket.once('close', onClose);
  });
}

/**
 * Stream `totalBytes` of body after `head` until the server answers: 16 KiB pieces with
 * backpressure, the first megabyte paced (10 ms a piece) so that the server's answer is read before
 * it closes a connection with unread bytes (which would reset it and lose the answer). A declared
 * length gets `headPauseMs` first, as a client sending `Expect: 100-continue` would wait. Returns
 * the status and how many body bytes had been written when the answer arrived.
 */
export async function streamUntilAnswered(
  pool: SocketPool,
  port: number,
  head: string,
  totalBytes: number,
  options: { chunked: boolean; headPauseMs?: number },
) {
  const socket = await pool.open(port);
  const answer = firstStatus(socket, 60_000);
  let answered: { status: number | undefined; head: string } | undefined;
  void answer.then((result) => (answered = result));
  await writeAll(socket, head);
  if (options.headPauseMs) await Promise.race([answer, sleep(options.headPauseMs)]);
  const piece = Buffer.alloc(16 * 1024, 0x5b); // '['
  let sent = 0;
  while (sent < totalBytes && answered === undefined && !socket.destroyed) {
    const size = Math.min(piece.length, totalBytes - sent);
    const data = size === piece.length ? piece : piece.subarray(0, size);
    const ok = await writeAll(socket, options.chunked ? Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), data, Buffer.from('\r\n')]) : data);
    if (!ok) break;
    sent += size;
    // The first megabyte slowly: the limit is 64 KiB, so a server that refuses early answers
    // here, and has read every byte we sent by then. Past it, as fast as the server reads.
    if (sent < MB) await Promise.race([answer, sleep(10)]);
    else if (sent % MB === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  const result = answered ?? (await answer);
  await pool.close(socket);
  return { ...result, bodyBytesSent: sent };
}

/** Slow-loris: `count` connections each sending a never-finished header block, one byte per `everyMs`. */
export async function startSlowLoris(pool: SocketPool, port: number, count: number, everyMs: number) {
  const head = `POST /webhooks/checkout HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Slow: ${'a'.repeat(4000)}`;
  const sockets: Socket[] = [];
  for (let i = 0; i < count; i += 1) sockets.push(await pool.open(port));
  let position = 0;
  let bytes = 0;
  const timer = setInterval(() => {
    const byte = head[Math.min(position, head.length - 1)]!;
    position += 1;
    for (const socket of sockets) {
      if (!socket.destroyed) {
        socket.write(byte);
        bytes += 1;
      }
    }
  }, everyMs);
  timer.unref();
  return {
    open: () => sockets.filter((socket) => !socket.destroyed).length,
    bytes: () => bytes,
    stop: async () => {
      clearInterval(timer);
      await Promise.all(sockets.map((socket) => pool.close(socket)));
    },
  };
}

/** Legitimate signed deliveries at a steady rate until stopped: statuses and latencies. */
export function steadyDeliveries(url: string, secret: string, perSecond: number) {
  const results: Array<{ status: number; ms: number; paymentId: string; error?: string }> = [];
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  const send = () => {
    const delivery = paidDelivery(secret);
    const started = performance.now();
    const request = fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body, signal: AbortSignal.timeout(30_000) })
      .then(async (response) => {
        await response.arrayBuffer();
        results.push({ status: response.status, ms: performance.now() - started, paymentId: delivery.paymentId });
      })
      .catch((error: Error) => {
        results.push({ status: 0, ms: performance.now() - started, paymentId: delivery.paymentId, error: error.message });
      });
    inFlight.add(request);
    void request.finally(() => inFlight.delete(request));
  };
  // Scheduled against the start time, so a slow tick does not lower the rate.
  const started = performance.now();
  let sent = 0;
  const loop = (async () => {
    while (!stopped) {
      const due = Math.floor(((performance.now() - started) / 1000) * perSecond) + 1;
      while (sent < due && !stopped) {
        send();
        sent += 1;
      }
      await sleep(Math.max(1, 1000 / perSecond / 2));
    }
  })();
  return {
    results,
    sent: () => sent,
    stop: async () => {
      stopped = true;
      await loop;
      await Promise.all([...inFlight]);
      return results;
    },
  };
}
