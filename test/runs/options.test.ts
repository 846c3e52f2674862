import { describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../src/errors/index.js';
import { FulfillmentEngine, normalizeEngineOptions, type FulfillmentEngineOptions } from '../../src/fulfillment/index.js';
import { silentLogger } from '../../src/log/index.js';
import { normalizeReconcileOptions, reconcile, type ReconcileOptions } from '../../src/reconcile/index.js';
import { MemoryStore } from '../../src/store/index.js';

const store = new MemoryStore();
const engineOptions = (options: Partial<FulfillmentEngineOptions> = {}): FulfillmentEngineOptions => ({
  store,
  handlers: {},
  logger: silentLogger,
  ...options,
});

describe('normalizeEngineOptions', () => {
  it('fills in the documented defaults', () => {
    const clock = () => new Date(0);
    const normalized = normalizeEngineOptions(engineOptions({ clock }));
    expect(normalized.runs).toMatchObject({
      leaseMs: 300_000,
      maxAttempts: 8,
      backoffMs: 2000,
      maxBackoffMs: 3_600_000,
      completionRetries: 5,
      completionRetryMs: 100,
      clock,
    });
    expect(normalized.runs.owner).toMatch(/^.+:\d+:[0-9a-f]{8}$/);
    expect(normalized).toMatchObject({ confirm: false, lateWindowMs: 7 * 86_400_000, coalesceCapacity: 50_000, coalesceSkewMs: 250, clock });
  });

  it('keeps what is given, and confirms only with a client', () => {
    const client = { payments: { get: async () => ({}) as never }, invoices: { get: async () => ({}) as never } };
    const normalized = normalizeEngineOptions(engineOptions({ owner: 'me', leaseMs: 5, maxAttempts: 1, backoffMs: 0, client }));
    expect(normalized.runs).toMatchObject({ owner: 'me', leaseMs: 5, maxAttempts: 1, backoffMs: 0 });
    expect(normalized.confirm).toBe(true);
    expect(normalizeEngineOptions(engineOptions({ client, confirm: false })).confirm).toBe(false);
    expect(normalizeEngineOptions(engineOptions({ confirm: true })).confirm).toBe(false);
  });

  it.each([
    ['leaseMs', 0, 'Engine option leaseMs must be a number ≥ 1, got 0'],
    ['maxAttempts', Number.NaN, 'Engine option maxAttempts must be a number ≥ 1, got NaN'],
    ['backoffMs', -1, 'Engine option backoffMs must be a number ≥ 0, got -1'],
    ['maxBackoffMs', Number.POSITIVE_INFINITY, 'Engine option maxBackoffMs must be a number ≥ 0, got Infinity'],
    ['completionRetries', -1, 'Engine option completionRetries must be a number ≥ 0'],
    ['lateWindowMs', -5, 'Engine option lateWindowMs must be a number ≥ 0'],
    ['coalesceSkewMs', '250', 'Engine option coalesceSkewMs must be a number ≥ 0, got 250'],
  ] as const)('refuses %s = %s when the engine is built', (name, value, message) => {
    const options = engineOptions({ [name]: value } as Partial<FulfillmentEngineOptions>);
    expect(() => normalizeEngineOptions(options)).toThrow(ConfigError);
    expect(() => new FulfillmentEngine(options)).toThrow(message);
  });

  it('logs to stderr by default, as the receiver does, never silently', () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const engine = new FulfillmentEngine({ store, handlers: {} });
      engine.logger.error({ err: new Error('disk gone') }, 'handler failed for good');
      const lines = write.mock.calls.map(([chunk]) => String(chunk)).filter((line) => line.includes('handler failed for good'));
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({
        level: 50,
        msg: 'handler failed for good',
        err: { message: 'disk gone', stack: expect.stringContaining('Error: disk gone') },
      });
    } finally {
      write.mockRestore();
    }
  });
});

describe('normalizeReconcileOptions', () => {
  const engine = new FulfillmentEngine(engineOptions({ clock: () => new Date(0) }));
  const reconcileOptions = (options: Partial<ReconcileOptions> = {}): ReconcileOptions => ({ store, engine, ...options });

  it('fills in the documented defaults, with the engine’s clock and logger', () => {
    expect(normalizeReconcileOptions(reconcileOptions())).toMatchObject({
      olderThanMs: 600_000,
      concurrency: 8,
      limit: 100_000,
      lockTtlMs: 120_000,
      clock: engine.clock,
      logger: engine.logger,
    });
  });

  it.each([
    ['olderThanMs', -1, 'Reconcile option olderThanMs must be a number ≥ 0, got -1'],
    ['concurrency', 0, 'Reconcile option concurrency must be a number ≥ 1, got 0'],
    ['limit', Number.NaN, 'Reconcile option limit must be a number ≥ 1, got NaN'],
    ['lockTtlMs', 0, 'Reconcile option lockTtlMs must be a number ≥ 1, got 0'],
  ] as const)('refuses %s = %s before the pass takes its lock', async (name, value, message) => {
    const options = reconcileOptions({ [name]: value });
    expect(() => normalizeReconcileOptions(options)).toThrow(ConfigError);
    await expect(reconcile(options)).rejects.toThrow(message);
    expect(await store.acquireLock('reconcile', 'someone-else', 1000, new Date(0))).toBe(true);
    await store.releaseLock('reconcile', 'someone-else', new Date(0));
  });
});
