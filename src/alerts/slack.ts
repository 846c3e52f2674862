import pRetry from 'p-retry';
import type { Logger } from '../log/index.js';
import { alertText, type Alert } from './alert.js';

/**
 * POST an alert to a Slack-compatible incoming webhook (`{ "text": … }`, which Slack, Mattermost,
 * Rocket.Chat and Discord's /slack endpoints accept). Three tries; a failure is logged, never thrown:
 * an unreachable chat must not stop the monitor. The URL is a secret and is never logged.
 */
export async function postAlert(url: string, alert: Alert, logger: Logger, timeoutMs = 10_000): Promise<boolean> {
  try {
    await pRetry(
      async () => {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ text: alertText(alert) }),
          signal: AbortSignal.timeout(timeoutMs),
        });
        await response.arrayBuffer().catch(() => undefined);
        if (!response.ok) throw new Error(`the alert URL answered ${response.status}`);
      },
      { retries: 2, minTimeout: 500, factor: 2 },
    );
    return true;
  } catch (error) {
    logger.error(
      { alert: alert.kind, err: (error as Error).message },
      `could not post the ${alert.kind} alert to CHECKOUT_ALERT_URL: ${(error as Error).message}`,
    );
    return false;
  }
}
