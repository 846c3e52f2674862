import { ConfigError } from '../errors/index.js';
import type { Environment } from '../schemas/index.js';

/** The kinds of credential the service issues (spec section 5). */
export type KeyKind = 'partner-key' | 'partner-secret' | 'merchant-key' | 'merchant-secret' | 'invoice-key' | 'webhook-secret';

const KEY_FORMATS: Record<KeyKind, { pattern: RegExp; example: string }> = {
  'partner-key': { pattern: /^svc_pk_(test|live)_.+$/, example: 'svc_pk_test_…' },
  'partner-secret': { pattern: /^svc_ps_.+$/, example: 'svc_ps_…' },
  'merchant-key': { pattern: /^svc_mk_(test|live)_.+$/, example: 'svc_mk_test_…' },
  'merchant-secret': { pattern: /^svc_ms_.+$/, example: 'svc_ms_…' },
  'invoice-key': { pattern: /^(test|live)_.+$/, example: 'test_…' },
  'webhook-secret': { pattern: /^whsec_[A-Za-z0-9+/=]+$/, example: 'whsec_<base64>' },
};

/** Describe a key safely for messages: its prefix only, never the secret part. */
export function describeKey(key: string): string {
  const match = /^(svc_(?:pk|mk)_(?:test|live)_|svc_(?:ps|ms)_|whsec_|(?:test|live)_)/.exec(key);
  return match ? `a key starting "${match[1]}"` : 'a key of unknown format';
}

/**
 * Throws `ConfigError` unless `key` has the format of `kind`; returns the key's environment (for
 * kinds that carry one).
 */
export function checkKey(kind: KeyKind, key: string, variable: string): Environment | undefined {
  const format = KEY_FORMATS[kind];
  const match = format.pattern.exec(key);
  if (!match) {
    throw new ConfigError(
      `${variable} should be ${kind.startsWith('invoice') ? 'an' : 'a'} ${kind.replace('-', ' ')} (${format.example}) but is ${describeKey(key)}. Check that the right value is in the right variable.`,
    );
  }
  const env = match[1];
  return env === 'test' || env === 'live' ? env : undefined;
}

/**
 * Check that every key with an environment agrees; returns that environment. Mixed test and live
 * keys are a `ConfigError` before any request is sent.
 */
export function environmentOf(keys: Array<{ variable: string; environment: Environment | undefined }>): Environment | undefined {
  let found: { variable: string; environment: Environment } | undefined;
  for (const key of keys) {
    if (!key.environment) continue;
    if (found && found.environment !== key.environment) {
      throw new ConfigError(
        `${found.variable} is a ${found.environment} key but ${key.variable} is a ${key.environment} key: use keys of one environment in one configuration.`,
      );
    }
    found ??= { variable: key.variable, environment: key.environment };
  }
  return found?.environment;
}
