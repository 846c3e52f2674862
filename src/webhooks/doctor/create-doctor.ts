import type { WebhookVerificationReason } from '../../errors/index.js';
import type { Environment } from '../../schemas/common.js';
import { headerGetter, type HeaderBag } from '../verify/header-value.js';
import type { WebhookScheme } from '../schemes/scheme.js';
import { resolveScheme } from '../schemes/resolve-scheme.js';
import { diagnose } from './diagnose.js';
import type { Diagnosis } from './diagnosis.js';
import type { NormalizedDoctorOptions } from './doctor-options.js';
import { guessFramework } from './frameworks.js';
import { tokenBucket } from './rate-limit.js';

/** Refusals the doctor explains; a missing or malformed header already says what is wrong. */
const EXPLAINED = new Set<WebhookVerificationReason>(['bad_signature', 'timestamp_too_old', 'timestamp_too_new']);

export interface Doctor {
  /** Whether the 401 answer carries the diagnosis (development mode). */
  readonly development: boolean;
  /** Keep diagnosed rejections as dead letters. */
  readonly deadLetters: boolean;
  /**
   * Explain one refused delivery; `undefined` when the refusal needs no explaining or the rate
   * limit is spent (then the delivery is refused as usual, only without a diagnosis).
   */
  explain(input: { headers: HeaderBag; body: Uint8Array | string; reason: WebhookVerificationReason }): Diagnosis | undefined;
}

export interface CreateDoctorOptions {
  doctor: NormalizedDoctorOptions;
  scheme: WebhookScheme;
  secrets: readonly string[];
  toleranceSeconds: number;
  environment: Environment | undefined;
  clock: () => Date;
}

/** The doctor of one receiver: its secrets decoded once, its rate limit on the receiver's clock. */
export function createDoctor(options: CreateDoctorOptions): Doctor {
  const scheme = resolveScheme(options.scheme);
  const keys = options.secrets.map((secret, index) => scheme.key(secret, index));
  const allowed = tokenBucket({ burst: options.doctor.burst, perMinute: options.doctor.perMinute, now: () => options.clock().getTime() });
  return {
    development: options.doctor.development,
    deadLetters: options.doctor.deadLetters,
    explain({ headers, body, reason }) {
      if (!EXPLAINED.has(reason) || !allowed()) return undefined;
      const header = headerGetter(headers);
      return diagnose(
        {
          scheme,
          schemeKind: options.scheme.kind,
          secrets: options.secrets,
          keys,
          environment: options.environment,
          toleranceSeconds: options.toleranceSeconds,
          nowSeconds: Math.floor(options.clock().getTime() / 1000),
          framework: guessFramework(header, options.doctor.framework),
        },
        { header, body: typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength), reason },
      );
    },
  };
}
