/**
 * What can put fulfilment at risk. Each kind is one incident at a time: it fires when
 * its condition starts and resolves when the condition ends, however many events feed it.
 */
export type AlertKind = 'run_failed' | 'dispatch_backlog' | 'missed_by_webhooks' | 'verification_failures' | 'store_unwritable';

/** Every kind, in the order they are checked: a `Record`, so a new kind is not forgotten. */
export const ALERT_KINDS = Object.keys({
  store_unwritable: true,
  run_failed: true,
  dispatch_backlog: true,
  missed_by_webhooks: true,
  verification_failures: true,
} satisfies Record<AlertKind, true>) as AlertKind[];

/** One message about an incident, as posted to `CHECKOUT_ALERT_URL` and given to `onAlert`. */
export interface Alert {
  kind: AlertKind;
  /** `firing` when the incident starts, `resolved` when it ends. */
  state: 'firing' | 'resolved';
  /** One line: what is wrong (or that it no longer is). */
  title: string;
  /** What is known: counts, examples, errors. */
  details: string;
  /** What to run or click next. */
  next: string;
  /** When it was decided, on the monitor's clock. */
  at: string;
}

/** The text of an alert as a chat message. */
export function alertText(alert: Alert): string {
  const head = alert.state === 'firing' ? `:rotating_light: checkout-kit: ${alert.title}` : `:white_check_mark: checkout-kit resolved: ${alert.title}`;
  return [head, alert.details, alert.state === 'firing' ? `Next: ${alert.next}` : undefined].filter(Boolean).join('\n');
}
