/** Alerts when fulfilment is at risk, once per incident, to a Slack-compatible URL and an `onAlert` hook. */
export { createAlertMonitor, ALERTS_SUBJECT } from './monitor.js';
export type { AlertMonitor, AlertMonitorOptions } from './monitor.js';
export { ALERT_KINDS, alertText } from './alert.js';
export type { Alert, AlertKind } from './alert.js';
export { postAlert } from './slack.js';
