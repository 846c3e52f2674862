/**
 * Defaults that a command's definition (its help text) and its action both name. Their own module,
 * importing nothing but files that import nothing, so that a definition and the action it loads on
 * demand need not import each other.
 */

/** The sandbox's port when neither --port nor PORT is given. */
export const DEFAULT_SANDBOX_PORT = 4010;

/** Where `sandbox` writes its credentials unless given `--data` (the sandbox's own default; its file imports nothing). */
export { DEFAULT_SANDBOX_DATA } from '../sandbox/data-dir.js';

/** `capture`'s port: next to the sandbox's 4010. */
export const DEFAULT_CAPTURE_PORT = 4020;

/** Where `capture` writes and `probe-signature` reads captures. */
export const DEFAULT_CAPTURE_DIR = '.checkout-kit/captures';

/** `checkout-kit console`'s port without --port (serve keeps PORT, 3000 by default). */
export const DEFAULT_CONSOLE_PORT = 3100;

/** The command that lists runs failed for good; other commands point the user at it. */
export const LIST_FAILED_RUNS = 'checkout-kit runs --failed';
