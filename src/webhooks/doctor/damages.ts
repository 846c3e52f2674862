import { RAW_BODY_FIX, type Framework } from './frameworks.js';

/** Damage to the bytes on their way into the receiver: undone on the body before verifying again. */
export type BodyDamage = 'reserialised-json' | 'charset' | 'form-encoded' | 'trailing-newline';
/** A configured secret that differs from the sender's: tried in other forms. */
export type SecretDamage = 'secret-whitespace' | 'secret-prefix';
/** Every cause the doctor knows. */
export type DamageKind = BodyDamage | SecretDamage | 'environment-secret' | 'clock-skew';

export interface DamageSpec {
  /** Short name, as logged and listed by `checkout-kit events dead-letters`. */
  title: string;
  /** What to change; body damage is fixed where the framework reads the body. */
  fix(framework: Framework): string;
}

/** The damage the doctor tries, in the order it reports them. */
export const DAMAGES: Record<DamageKind, DamageSpec> = {
  'reserialised-json': {
    title: 'body re-serialised from parsed JSON',
    fix: (framework) => `Verify the bytes as received, before any JSON parsing: ${RAW_BODY_FIX[framework]}`,
  },
  charset: {
    title: 'body converted between charsets',
    fix: (framework) =>
      `Read the body as bytes and never decode and re-encode it (latin1/binary strings, a charset option, a proxy converting text): ${RAW_BODY_FIX[framework]}`,
  },
  'form-encoded': {
    title: 'body handled as a form',
    fix: (framework) =>
      `The body went through form (application/x-www-form-urlencoded) encoding or parsing: keep it application/json and give the receiver the raw bytes: ${RAW_BODY_FIX[framework]}`,
  },
  'trailing-newline': {
    title: 'newline added or removed at the end of the body',
    fix: (framework) =>
      `Pass the body through unchanged (a proxy, a logging or body-rewriting middleware, or a test sending a file with a final newline changed it): ${RAW_BODY_FIX[framework]}`,
  },
  'secret-whitespace': {
    title: 'secret with whitespace',
    fix: () =>
      'Configure the secret exactly as the service shows it, without spaces or line breaks (a secret read from a file usually ends in a newline: trim it).',
  },
  'secret-prefix': {
    title: 'secret with or without its whsec_ prefix',
    fix: () =>
      'Configure the secret exactly as the service shows it, whsec_ prefix included, in CHECKOUT_WEBHOOK_SECRET (and in any other tool that signs or verifies): with Standard Webhooks the key is the base64 part after whsec_, decoded; other schemes use the whole string.',
  },
  'environment-secret': {
    title: 'secret of the other environment',
    fix: () =>
      'Use the webhook secret of the environment that sends: live deliveries are signed with the live secret, test deliveries with the test one. Point each environment’s webhook at a receiver configured with its secret.',
  },
  'clock-skew': {
    title: 'clock skew beyond the tolerance',
    fix: () =>
      "Sync this server's clock (NTP, e.g. timedatectl set-ntp true). If the clock is right, a delivery signed before it is an old one sent again (resend it freshly signed: checkout-kit replay signs again), and one signed after it comes from a sender whose clock runs ahead.",
  },
};
