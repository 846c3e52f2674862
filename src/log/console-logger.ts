import { redact } from '../errors/index.js';
import type { Logger } from './logger.js';

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;
type Level = keyof typeof LEVELS;

/**
 * A logger over `console`, for runtimes where pino's Node streams are missing (Cloudflare Workers,
 * edge runtimes): their platforms collect console output. Secrets are scrubbed as in `createLogger`.
 * @example createWebReceiver({ store, secrets, logger: consoleLogger('warn') })
 */
export function consoleLogger(level: Level = 'info'): Logger {
  const at =
    (name: Level, write: (line: string) => void) =>
    (obj: object | string, msg?: string): void => {
      if (LEVELS[name] < LEVELS[level]) return;
      const fields = typeof obj === 'string' ? { msg: obj } : { ...obj, msg };
      write(redact(JSON.stringify({ level: name, ...fields })));
    };
  const logger: Logger = {
    debug: at('debug', (line) => console.debug(line)),
    info: at('info', (line) => console.info(line)),
    warn: at('warn', (line) => console.warn(line)),
    error: at('error', (line) => console.error(line)),
    child: () => logger,
  };
  return logger;
}
