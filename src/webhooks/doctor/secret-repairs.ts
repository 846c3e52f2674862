import type { KeyForm } from '../schemes/decode-secret.js';
import type { SecretDamage } from './damages.js';

const PREFIX = 'whsec_';

/** One other form of a configured secret: its key bytes, and how it differs (never the secret itself). */
export interface SecretVariant {
  key: Buffer;
  form: string;
}

/** Key bytes the sender may have used instead of the configured secret's. */
export type SecretRepair = (secret: string, keyForm: KeyForm) => SecretVariant[];

const text = (value: string) => Buffer.from(value, 'utf8');

/**
 * Other forms of a configured secret, by the key form of the receiver's scheme. A `whsec-base64`
 * key (Standard Webhooks) is the base64 part after `whsec_` decoded (with or without the prefix,
 * and whitespace is refused when configured), so there the damage is a sender that used the secret
 * as text; a `utf8` key is the string itself, so whitespace and a missing or extra prefix change it.
 */
export const SECRET_REPAIRS: Record<SecretDamage, SecretRepair> = {
  'secret-whitespace': (secret, keyForm) => {
    if (keyForm === 'whsec-base64') return [];
    const variants: SecretVariant[] = [
      { key: text(secret.trim()), form: 'trimmed of the whitespace around it' },
      { key: text(secret.replace(/\s+/g, '')), form: 'with its whitespace removed' },
    ];
    return variants.filter((variant, i) => variant.key.length > 0 && !variant.key.equals(text(secret)) && !(i === 1 && variant.key.equals(variants[0]!.key)));
  },
  'secret-prefix': (secret, keyForm) => {
    const prefixed = secret.startsWith(PREFIX);
    const bare = prefixed ? secret.slice(PREFIX.length) : secret;
    if (keyForm === 'whsec-base64') {
      return [
        { key: text(secret), form: 'used as text instead of base64-decoding the part after whsec_' },
        prefixed
          ? { key: text(bare), form: 'without its whsec_ prefix, used as text' }
          : { key: text(PREFIX + secret), form: 'with a whsec_ prefix, used as text' },
      ];
    }
    return [prefixed ? { key: text(bare), form: 'without its whsec_ prefix' } : { key: text(PREFIX + secret), form: 'with a whsec_ prefix' }];
  },
};
