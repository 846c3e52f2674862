import { randomUUID } from 'node:crypto';
import { describeFetchError, isBadPort } from '../../errors/index.js';
import type { Logger } from '../../log/index.js';
import { backoffDelay } from '../../runs/index.js';
import { answerErrorOf, describeAnswer, type AnswerError } from '../../webhooks/receive/receiver-answer.js';
import { signWebhook } from '../../webhooks/verify/sign.js';
import type { WebhookFaults, WebhookRetry } from '../options.js';
import type { DeliveryRecord, SandboxEvent } from '../records.js';
import { createRng, decideFaults, shuffle } from './faults.js';

export interface WebhookSenderOptions {
  urls: string[];
  /** The `whsec_…` secret deliveries are signed with (Standard Webhooks, contract 3a). */
  secret: string;
  /** The secret of one event's deliveries when not `secret` (a merchant with its own). */
  secretOf?: (event: SandboxEvent) => string | undefined;
  faults: Required<WebhookFaults>;
  retry: Required<WebhookRetry>;
  /** Called for every attempt (and every dropped delivery), to keep the deliveries log. */
  record: (delivery: DeliveryRecord) => void;
  logger: Logger;
}

interface Job {
  event: SandboxEvent;
  /** Serialised once: every attempt and the duplicate send the same bytes. */
  body: string;
  url: string;
  duplicated: boolean;
  stale: boolean;
  attempt: number;
}

/** Signed with a timestamp this old when the stale-timestamp fault hits: beyond the 300 s tolerance. */
const STALE_SECONDS = 3600;

/**
 * Sends each event to every URL, signed with Standard Webhooks; retries non-2xx answers, network
 * errors and timeouts with exponential backoff; injects the configured faults from a seeded PRNG.
 * First attempts to one URL go out one at a time in event order (unless `reorder` shuffles them);
 * retries run beside them.
 */
export class WebhookSender {
  private readonly rng: () => number;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly controllers = new Set<AbortController>();
  private readonly chains = new Map<string, Promise<void>>();
  private batch: Job[] = [];
  private batchTimer: NodeJS.Timeout | undefined;
  private pending = 0;
  private waiters: Array<() => void> = [];
  private closed = false;

  constructor(private readonly options: WebhookSenderOptions) {
    this.rng = createRng(options.faults.seed);
  }

  /** Queue `events` for every URL. Returns at once; delivery happens in the background. */
  dispatch(events: SandboxEvent[]): void {
    if (this.closed) return;
    for (const event of events) {
      const body = JSON.stringify(event);
      for (const url of this.options.urls) {
        const faults = decideFaults(this.rng, this.options.faults);
        if (faults.drop) {
          this.recordDropped(event, url);
          continue;
        }
        for (const duplicated of faults.duplicate ? [false, true] : [false]) {
          this.schedule({ event, body, url, duplicated, stale: faults.stale, attempt: 1 });
        }
      }
    }
  }

  /** Resolves when every queued delivery has succeeded or given up. */
  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Stop: pending retries are abandoned and requests in progress aborted. */
  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    if (this.batchTimer) clearTimeout(this.batchTimer);
    for (const controller of this.controllers) controller.abort();
    this.pending = 0;
    this.release();
  }

  private schedule(job: Job): void {
    this.pending += 1;
    if (this.options.faults.reorder) {
      this.batch.push(job);
      this.batchTimer ??= this.later(this.options.faults.reorderWindowMs, () => this.flushBatch());
      return;
    }
    this.startAfterDelay(job);
  }

  private flushBatch(): void {
    const jobs = shuffle(this.batch, this.rng);
    this.batch = [];
    this.batchTimer = undefined;
    for (const job of jobs) this.startAfterDelay(job);
  }

  private startAfterDelay(job: Job): void {
    if (this.options.faults.delayMs > 0) this.later(this.options.faults.delayMs, () => this.enqueue(job));
    else this.enqueue(job);
  }

  private enqueue(job: Job): void {
    const next = (this.chains.get(job.url) ?? Promise.resolve()).then(() => this.attempt(job));
    this.chains.set(job.url, next);
  }

  private async attempt(job: Job): Promise<void> {
    if (this.closed) return;
    const { retry } = this.options;
    const startedAt = new Date();
    const signedTimestamp = Math.floor(startedAt.getTime() / 1000) - (job.stale ? STALE_SECONDS : 0);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'checkout-kit-sandbox',
      ...signWebhook({ id: job.event.id, timestamp: signedTimestamp, body: job.body, secret: this.options.secretOf?.(job.event) ?? this.options.secret }),
    };
    const controller = new AbortController();
    this.controllers.add(controller);
    const timeout = setTimeout(() => controller.abort(), retry.timeoutMs);
    let statusCode: number | null = null;
    let error: string | null = null;
    let refusal: AnswerError | undefined;
    try {
      const response = await fetch(job.url, { method: 'POST', headers, body: job.body, signal: controller.signal });
      statusCode = response.status;
      const text = await response.text().catch(() => '');
      if (!response.ok) refusal = answerErrorOf(text);
    } catch (cause) {
      error = controller.signal.aborted ? `no answer within ${retry.timeoutMs} ms` : describe(cause, job.url);
    } finally {
      clearTimeout(timeout);
      this.controllers.delete(controller);
    }
    if (this.closed) return;

    const delivered = statusCode !== null && statusCode >= 200 && statusCode < 300;
    // Each refusal, with what the receiver said: a wrong secret or a broken route shows at once, not after every retry.
    if (statusCode !== null && !delivered) {
      const answer = describeAnswer({ status: statusCode, ...refusal });
      this.options.logger.warn(
        { eventId: job.event.id, type: job.event.type, url: job.url, attempt: job.attempt, statusCode, code: refusal?.code, message: refusal?.message },
        `webhook refused: ${job.url} ${answer}`,
      );
    }
    const retryIn = !delivered && job.attempt < retry.maxAttempts ? backoffDelay(job.attempt, retry.baseDelayMs) : null;
    const finishedAt = new Date();
    this.options.record({
      id: `dlv_${randomUUID().replaceAll('-', '')}`,
      eventId: job.event.id,
      type: job.event.type,
      url: job.url,
      attempt: job.attempt,
      statusCode,
      error,
      delivered,
      dropped: false,
      duplicated: job.duplicated,
      staleTimestamp: job.stale,
      signedTimestamp,
      startedAt: startedAt.toISOString(),
      finishedAt: finishedAt.toISOString(),
      nextAttemptAt: retryIn === null ? null : new Date(finishedAt.getTime() + retryIn).toISOString(),
    });
    if (retryIn === null) {
      if (!delivered) this.options.logger.warn({ eventId: job.event.id, url: job.url, statusCode, error }, 'webhook delivery gave up');
      this.finish();
      return;
    }
    this.later(retryIn, () => void this.attempt({ ...job, attempt: job.attempt + 1 }));
  }

  private recordDropped(event: SandboxEvent, url: string): void {
    const at = new Date().toISOString();
    this.options.record({
      id: `dlv_${randomUUID().replaceAll('-', '')}`,
      eventId: event.id,
      type: event.type,
      url,
      attempt: 0,
      statusCode: null,
      error: 'dropped by fault injection',
      delivered: false,
      dropped: true,
      duplicated: false,
      staleTimestamp: false,
      signedTimestamp: null,
      startedAt: at,
      finishedAt: at,
      nextAttemptAt: null,
    });
  }

  private later(ms: number, fn: () => void): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    timer.unref();
    this.timers.add(timer);
    return timer;
  }

  private finish(): void {
    this.pending = Math.max(0, this.pending - 1);
    if (this.pending === 0) this.release();
  }

  private release(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}

function describe(error: unknown, url: string): string {
  if (error instanceof Error) {
    // fetch's own word for a port it will not use ("bad port") says nothing of what to do.
    const cause = error.cause instanceof Error ? `: ${isBadPort(error) ? describeFetchError(error, url) : error.cause.message}` : '';
    return `${error.message}${cause}`;
  }
  return String(error);
}
