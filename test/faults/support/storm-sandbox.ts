/**
 * The real `checkout-kit sandbox` as a child process, and what the storms read from it: its
 * delivery log (GET /sandbox/deliveries, merged across polls since the sandbox keeps only the last
 * MAX_DELIVERIES records), its events (GET /sandbox/events) and its final state (sandbox.json).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DeliveryRecord, SandboxEvent } from '../../../src/sandbox/index.js';
import { waitForOutput, type Procs, type Proc, sleep } from './procs-children.js';

export interface SandboxFlags {
  port: number;
  dataDir: string;
  webhookUrls: string[];
  /** Fault flags, e.g. ['--drop', '0.1', '--duplicate', '0.2', '--reorder']. */
  faults: string[];
  seed: number;
}

export interface RunningSandbox {
  proc: Proc;
  url: string;
  credentials: {
    webhookSecret: string;
    test: { merchant: { apiKey: string; signingSecret: string; invoiceKey: string } };
  };
}

/** Start `checkout-kit sandbox` and wait until it listens. */
export async function startSandboxProcess(procs: Procs, flags: SandboxFlags): Promise<RunningSandbox> {
  const args = ['sandbox', '--port', String(flags.port), '--data', flags.dataDir, '--seed', String(flags.seed), '--expires-in', '2h', ...flags.faults];
  for (const url of flags.webhookUrls) args.push('--webhook-url', url);
  const proc = procs.cli('sandbox', args, { cwd: flags.dataDir, env: { LOG_LEVEL: 'error' } });
  const [, url, credentialsPath] = await waitForOutput(proc, /sandbox listening on (http:\/\/127\.0\.0\.1:\d+)\ncredentials: (\S+)\n/, 60_000);
  const credentials = JSON.parse(await readFile(credentialsPath!, 'utf8')) as RunningSandbox['credentials'];
  return { proc, url: url!, credentials };
}

export async function getJson<T>(url: string, timeoutMs = 60_000): Promise<T> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok) throw new Error(`GET ${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** POST a simulation call; resolves with the status and the answer. */
export async function postJson(url: string, body: unknown, timeoutMs = 60_000): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // kept as text
  }
  return { status: response.status, body: parsed };
}

/** The sandbox's delivery records, merged by id across polls. */
export class DeliveryLog {
  readonly records = new Map<string, DeliveryRecord>();
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<unknown> = Promise.resolve();

  constructor(private readonly sandboxUrl: () => string) {}

  async poll(): Promise<DeliveryRecord[]> {
    const list = await getJson<DeliveryRecord[]>(`${this.sandboxUrl()}/sandbox/deliveries`);
    for (const record of list) this.records.set(record.id, record);
    return list;
  }

  /** Poll every `ms` in the background (errors ignored: the sandbox may be restarting). */
  start(ms: number): void {
    const tick = () => {
      this.polling = this.poll()
        .catch(() => undefined)
        .finally(() => {
          if (this.timer) this.timer = setTimeout(tick, ms);
        });
    };
    this.timer = setTimeout(tick, ms);
  }

  async stop(): Promise<void> {
    const timer = this.timer;
    this.timer = undefined;
    clearTimeout(timer);
    await this.polling;
  }

  all(): DeliveryRecord[] {
    return [...this.records.values()];
  }
}

/**
 * Delivery jobs (event × URL × original/duplicate) still waiting for an attempt, and events with
 * no record yet for some URL. Both 0 (and stable across polls) means the sender is idle.
 */
export function unsettled(events: SandboxEvent[], records: DeliveryRecord[], urls: string[]): { jobs: number; unseen: number } {
  const last = new Map<string, DeliveryRecord>();
  const seen = new Set<string>();
  for (const record of records) {
    seen.add(`${record.eventId}|${record.url}`);
    const job = `${record.eventId}|${record.url}|${record.duplicated}`;
    const before = last.get(job);
    if (!before || record.attempt > before.attempt) last.set(job, record);
  }
  let jobs = 0;
  for (const record of last.values()) if (!record.delivered && record.nextAttemptAt !== null) jobs += 1;
  let unseen = 0;
  for (const event of events) for (const url of urls) if (!seen.has(`${event.id}|${url}`)) unseen += 1;
  return { jobs, unseen };
}

/** Wait until every delivery the sandbox made has been answered or given up (bounded). */
export async function waitForDeliveriesIdle(
  log: DeliveryLog,
  sandboxUrl: string,
  urls: string[],
  timeoutMs: number,
): Promise<{ idle: boolean; jobs: number; unseen: number }> {
  const deadline = Date.now() + timeoutMs;
  let previous = -1;
  let state: { jobs: number; unseen: number };
  for (;;) {
    const events = await getJson<SandboxEvent[]>(`${sandboxUrl}/sandbox/events`);
    await log.poll();
    state = unsettled(events, log.all(), urls);
    const count = log.records.size;
    if (state.jobs === 0 && state.unseen === 0 && count === previous) return { idle: true, ...state };
    previous = count;
    if (Date.now() > deadline) return { idle: false, ...state };
    await sleep(1_500);
  }
}

/** A payment as the sandbox holds it in sandbox.json. */
export interface SandboxPayment {
  id: string;
  status: string;
  amount: string;
  amountReceived: string;
  expiresAt: string;
  expiryNotified: boolean;
  referenceId: string | null;
}

/** The sandbox's final state (read from its data folder once it has stopped). */
export async function readSandboxState(dataDir: string): Promise<{ payments: SandboxPayment[]; events: SandboxEvent[] }> {
  const data = JSON.parse(await readFile(join(dataDir, 'sandbox.json'), 'utf8')) as { payments: SandboxPayment[]; events: SandboxEvent[] };
  return { payments: data.payments, events: data.events };
}
