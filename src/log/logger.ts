import { createRequire } from 'node:module';
import { pino } from 'pino';
import type { PrettyOptions } from 'pino-pretty';
import { ApiError, ConfigError, NetworkError, redact, TimeoutError } from '../errors/index.js';

/** The subset of pino's logger checkout-kit calls. */
export interface Logger {
  /** Detail for debugging. */
  debug(obj: object | string, msg?: string): void;
  /** What happened, in normal operation. */
  info(obj: object | string, msg?: string): void;
  /** Something went wrong and was handled (a retry, a refusal). */
  warn(obj: object | string, msg?: string): void;
  /** Something failed and needs a person. */
  error(obj: object | string, msg?: string): void;
  /** A logger that adds `bindings` to every line. */
  child?(bindings: Record<string, unknown>): Logger;
}

/** `createLogger`'s level, destination and line format. */
export interface CreateLoggerOptions {
  /** @default 'info' (or `LOG_LEVEL`) */
  level?: string;
  /**
   * Where lines go: a Node stream, or anything with `write`. Typed without Node's types, so the
   * declarations of `checkout-kit/web`, which name this file, load in a project without them.
   * @default stderr
   */
  destination?: {
    /** Take one line. */
    write(chunk: string): unknown;
  };
  /**
   * `json`: one JSON object per line, for log collectors; `pretty`: a line a person reads (time,
   * level, message, then the fields). @default `LOG_FORMAT`, else `pretty` when `tty`, else `json`
   */
  format?: string | undefined;
  /** Whether the lines end up on a terminal (picks the default format, and colours). @default false */
  tty?: boolean | undefined;
}

const FORMATS = ['json', 'pretty'] as const;

/** A pino logger that redacts secrets and authorization headers from every line. */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const destination = options.destination ?? process.stderr;
  // An empty LOG_LEVEL is unset, as every other empty variable is.
  const level = options.level || process.env.LOG_LEVEL?.trim() || 'info';
  // pino's own refusal names none of this ("default level:… must be included in custom levels").
  if (level !== 'silent' && !Object.hasOwn(pino.levels.values, level)) {
    throw new ConfigError(`The log level "${level}" (LOG_LEVEL) is not one of ${[...Object.keys(pino.levels.values), 'silent'].join(', ')}.`);
  }
  const format = options.format?.trim() || process.env.LOG_FORMAT?.trim() || (options.tty ? 'pretty' : 'json');
  if (!(FORMATS as readonly string[]).includes(format)) throw new ConfigError(`The log format "${format}" (LOG_FORMAT) is not one of ${FORMATS.join(', ')}.`);
  const target = format === 'pretty' ? prettyLines(destination, options.tty ?? false) : destination;
  return pino(
    {
      level,
      redact: { paths: ['headers.authorization', 'headers["x-request-signature"]', '*.apiKey', '*.signingSecret', '*.secret'], censor: '[redacted]' },
      serializers: { err: serializeError },
      hooks: {
        streamWrite: (line: string) => redact(line),
      },
    },
    target as pino.DestinationStream,
  );
}

/**
 * Each JSON line, redacted already, written as pino-pretty formats it (loaded only for this: a
 * process logging JSON never loads it).
 */
function prettyLines(destination: { write(chunk: string): unknown }, colorize: boolean): { write(line: string): void } {
  const { prettyFactory } = createRequire(import.meta.url)('pino-pretty') as { prettyFactory(options: PrettyOptions): (line: string) => string };
  const pretty = prettyFactory({ colorize, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname', singleLine: false });
  return { write: (line) => void destination.write(pretty(line)) };
}

/**
 * `err` as a line shows it. The service's answer (`ApiError`: a wrong key, an unknown payment) is
 * its status, code and message: its stack says only where the client threw, in every such line.
 * So is a service that gave no answer (`NetworkError`, `TimeoutError`: the message names the cause)
 * and a `DOMException` (a timeout or abort reason: its stack is a timer's, and a serializer that
 * copies every property would copy its 25 legacy code constants too).
 */
function serializeError(error: unknown): unknown {
  if (error instanceof ApiError) return { type: error.name, message: error.message, status: error.status, code: error.code, operation: error.operation };
  if (error instanceof NetworkError || error instanceof TimeoutError || error instanceof DOMException) return { type: error.name, message: error.message };
  return pino.stdSerializers.err(error as Error);
}

/**
 * The toolkit's one default logger, for everything built without one (receiver, engine, reconcile):
 * JSON lines on stderr, secrets redacted, so that a failure is never silent. Pass `silentLogger`
 * to drop everything.
 */
export function defaultLogger(): Logger {
  return createLogger();
}

/** A logger that drops everything. */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silentLogger;
  },
};
