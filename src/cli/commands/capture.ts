import type { CaptureFlags } from '../actions/capture.js';
import { DEFAULT_CAPTURE_DIR, DEFAULT_CAPTURE_PORT } from '../defaults.js';
import { portNumber } from '../flags.js';
import type { Register } from '../register.js';

/**
 * `checkout-kit capture`: record real deliveries, byte-exact, to discover how the service signs
 * them (issue item 6). Test environment only: captures hold real signatures and payloads.
 */
export const registerCapture: Register = (program, io) => {
  program
    .command('capture')
    .description('record incoming webhook deliveries (raw body and every header) for probe-signature; answers 200 and acts on nothing (test environment only)')
    .option('--port <n>', `port on 127.0.0.1 (0: any free port)`, portNumber('--port'), DEFAULT_CAPTURE_PORT)
    .option('--out <dir>', 'folder the captures are written to', DEFAULT_CAPTURE_DIR)
    .option('--json', 'print the startup line and each capture as JSON lines')
    .action(async (flags: CaptureFlags) => (await import('../actions/capture.js')).capture(flags, io));
};
