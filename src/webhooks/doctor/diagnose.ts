import { isUtf8 } from 'node:buffer';
import type { WebhookVerificationReason } from '../../errors/index.js';
import type { Environment } from '../../schemas/common.js';
import type { HeaderGetter, SchemeImplementation, VerifiedDelivery, WebhookScheme } from '../schemes/scheme.js';
import { SCHEMES } from '../schemes/registry.js';
import { BODY_REPAIRS } from './body-repairs.js';
import { DAMAGES, type BodyDamage, type DamageKind } from './damages.js';
import type { Diagnosis } from './diagnosis.js';
import type { Framework } from './frameworks.js';
import { isObject, keySequence, keysSorted, minifyJson, nonAsciiEscapes, parseJson } from './json-text.js';
import { SECRET_REPAIRS } from './secret-repairs.js';

/** HMACs one diagnosis may compute at most (each over at most `maxBodyBytes`). */
export const MAX_HMACS = 64;
/** Configured secrets tried in other forms (the newest first, as configured). */
const MAX_SECRETS = 4;
const ANY_TIME = Number.MAX_SAFE_INTEGER;

export interface DiagnoseContext {
  scheme: SchemeImplementation;
  schemeKind: WebhookScheme['kind'];
  /** The configured secrets (only read here; never written into a diagnosis). */
  secrets: readonly string[];
  /** Their decoded keys, as the verifier uses them. */
  keys: readonly Uint8Array[];
  environment: Environment | undefined;
  toleranceSeconds: number;
  nowSeconds: number;
  framework: Framework;
}

export interface DiagnoseInput {
  header: HeaderGetter;
  body: Buffer;
  /** Why the verifier refused it. */
  reason: WebhookVerificationReason;
}

function seconds(skew: number): string {
  return skew >= 0 ? `${skew} s before this server's time` : `${-skew} s after this server's time`;
}

/** What changed between the received body and the original that verified. */
function reserialisation(received: string, original: string): string {
  const changed: string[] = [];
  const [a, b] = [parseJson(received), parseJson(original)];
  if (a !== undefined && b !== undefined && keySequence(a).join('\n') !== keySequence(b).join('\n')) changed.push('key order');
  if (minifyJson(received) !== received || minifyJson(original) !== original) changed.push('whitespace');
  if (nonAsciiEscapes(received) !== nonAsciiEscapes(original)) changed.push('escaped unicode');
  return changed.length > 0 ? changed.join(', ') : 'number or escape formatting';
}

const PROVEN: Record<BodyDamage, (received: Buffer, original: Buffer) => string> = {
  'reserialised-json': (received, original) =>
    `the body was re-serialised from parsed JSON (changed: ${reserialisation(received.toString('utf8'), original.toString('utf8'))}): the signature matches the body as the service wrote it, not the one that reached the receiver.`,
  charset: (received) =>
    isUtf8(received)
      ? 'multibyte UTF-8 text (such as "é" or an emoji) was read as latin1 and written back as UTF-8: the signature matches the body with that conversion undone.'
      : 'the UTF-8 body was converted to latin1 (one byte per character): the signature matches it converted back.',
  'form-encoded': () =>
    'the JSON body was form-encoded (percent-encoded, or parsed as a form field and written out again): the signature matches the JSON inside it.',
  'trailing-newline': (received, original) =>
    original.length < received.length
      ? 'a newline was added at the end of the body: the signature matches the body without it.'
      : 'the newline that ended the body was removed: the signature matches the body with it.',
};

/** Signs of body damage that could not be undone (no proof; reported as likely). */
const SIGNS: Record<BodyDamage, (received: Buffer) => string | undefined> = {
  'reserialised-json': (received) => {
    const text = received.toString('utf8');
    const parsed = parseJson(text);
    if (parsed === undefined) return undefined;
    if (minifyJson(text) !== text) return 'it is JSON with whitespace between tokens, and the service sends compact JSON';
    if (typeof parsed === 'object' && parsed !== null && Object.keys(parsed).length > 2 && keysSorted(parsed))
      return 'its keys are sorted alphabetically, and the service does not sort them';
    return undefined;
  },
  charset: (received) =>
    !isUtf8(received) ? 'it is not valid UTF-8' : /[\u00c2-\u00f4][\u0080-\u00bf]/.test(received.toString('utf8')) ? 'it has mojibake such as "Ã©"' : undefined,
  'form-encoded': (received) => (/^[A-Za-z0-9_.-]+=|%7B|%22/i.test(received.toString('latin1')) ? 'it looks form-encoded' : undefined),
  'trailing-newline': (received) => (received.at(-1) === 0x0a ? 'it ends with a newline' : undefined),
};

function claimedEnvironment(body: Buffer): Environment | undefined {
  const parsed = parseJson(body.toString('utf8'));
  const environment = parsed !== undefined && isObject(parsed) ? parsed.environment : undefined;
  return environment === 'test' || environment === 'live' ? environment : undefined;
}

/**
 * Explain a rejected delivery: undo each usual damage in turn and verify again with the configured
 * secrets (a match is proof), then look for signs that prove nothing but make a cause likely. Work
 * is capped at `MAX_HMACS` HMACs. The secrets are used, never written out.
 */
export function diagnose(context: DiagnoseContext, input: DiagnoseInput): Diagnosis {
  const { scheme, toleranceSeconds, nowSeconds, framework } = context;
  let budget = MAX_HMACS;
  const verifies = (body: Buffer, keys: readonly Uint8Array[]): VerifiedDelivery | undefined => {
    if (keys.length === 0 || budget < keys.length) return undefined;
    budget -= keys.length;
    try {
      return scheme.verify({ header: input.header, body, keys, nowSeconds, toleranceSeconds: ANY_TIME });
    } catch {
      return undefined;
    }
  };
  const verdict = (cause: DamageKind | 'unknown', certain: boolean, summary: string, fix?: string): Diagnosis => ({
    cause,
    certain,
    summary,
    fix: fix ?? (cause === 'unknown' ? '' : DAMAGES[cause].fix(framework)),
    framework,
  });
  const skewOf = (verified: VerifiedDelivery) => (verified.timestamp === undefined ? 0 : nowSeconds - verified.timestamp);
  const alsoLate = (verified: VerifiedDelivery) => {
    const skew = skewOf(verified);
    return Math.abs(skew) > toleranceSeconds ? ` It was also signed ${seconds(skew)} (tolerance ${toleranceSeconds} s).` : '';
  };
  const timestampRefused = input.reason === 'timestamp_too_old' || input.reason === 'timestamp_too_new';

  // 1. The bytes and the secret are right; only the time is off.
  if (timestampRefused) {
    const verified = verifies(input.body, context.keys);
    if (verified) {
      return verdict(
        'clock-skew',
        true,
        `The signature matches (the delivery is genuine), but it was signed ${seconds(skewOf(verified))}, beyond the ${toleranceSeconds} s tolerance.`,
      );
    }
  }

  // 2. Damage to the bytes, undone.
  const tried = new Set<string>([input.body.toString('base64')]);
  for (const [damage, repair] of Object.entries(BODY_REPAIRS) as Array<[BodyDamage, (typeof BODY_REPAIRS)[BodyDamage]]>) {
    for (const candidate of repair(input.body)) {
      const bytes = typeof candidate === 'string' ? Buffer.from(candidate, 'utf8') : candidate;
      const id = bytes.toString('base64');
      if (tried.has(id)) continue;
      tried.add(id);
      const verified = verifies(bytes, context.keys);
      if (verified) return verdict(damage, true, `${capitalise(PROVEN[damage](input.body, bytes))}${alsoLate(verified)}`);
    }
  }

  // 3. A secret in another form.
  for (const [damage, repair] of Object.entries(SECRET_REPAIRS) as Array<[keyof typeof SECRET_REPAIRS, (typeof SECRET_REPAIRS)[keyof typeof SECRET_REPAIRS]]>) {
    for (const [index, secret] of context.secrets.slice(0, MAX_SECRETS).entries()) {
      for (const variant of repair(secret, SCHEMES[context.schemeKind].keyForm)) {
        const verified = verifies(input.body, [variant.key]);
        if (verified) {
          return verdict(
            damage,
            true,
            `The signature matches configured secret #${index + 1} ${variant.form}: the sender and this receiver hold the secret in different forms.${alsoLate(verified)}`,
          );
        }
      }
    }
  }

  // 4. Signs that prove nothing but make a cause likely.
  const claimed = claimedEnvironment(input.body);
  if (claimed !== undefined && context.environment !== undefined && claimed !== context.environment) {
    return verdict(
      'environment-secret',
      false,
      `The delivery says it comes from the ${claimed} environment but this receiver is configured for ${context.environment}: it was most likely signed with the ${claimed} webhook secret while this receiver holds the ${context.environment} one.`,
    );
  }
  for (const [damage, sign] of Object.entries(SIGNS) as Array<[BodyDamage, (typeof SIGNS)[BodyDamage]]>) {
    const seen = sign(input.body);
    if (seen) {
      return verdict(
        damage,
        false,
        `Probably ${DAMAGES[damage].title}: ${seen}. Undoing it did not make the signature match, so something else changed too (or the secret differs).`,
      );
    }
  }

  const late = timestampRefused ? ' Its timestamp is outside the tolerance as well.' : '';
  return verdict(
    'unknown',
    false,
    'No known damage explains it: the signature matches none of the configured secrets, even after undoing re-serialised JSON, a charset conversion, form encoding, a trailing newline, and secret whitespace or prefix. ' +
      `The delivery is forged, or signed with a secret this receiver does not have.${late}`,
    'Nothing to change in how the body is read. If the sender is genuine, configure its current secret (during a rotation give both, separated by a space); otherwise nothing: the delivery was refused.',
  );
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
