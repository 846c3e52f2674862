import { randomUUID } from 'node:crypto';
import type { AnyCharge, SandboxEvent } from '../records.js';
import { chargeView } from '../resources/charge-view.js';

/**
 * Contract 3c: `{ id, type, createdAt, environment, data }`, `data` being the resource as Get
 * returns it at the moment of the change (Get payment; Get invoice with payments and settlements).
 */
export function buildEvent(record: AnyCharge, suffix: string, baseUrl: string, now: Date): SandboxEvent {
  return {
    id: `evt_${randomUUID().replaceAll('-', '')}`,
    type: `${record.kind}.${suffix}`,
    createdAt: now.toISOString(),
    environment: record.environment,
    data: chargeView(record, baseUrl),
  };
}
