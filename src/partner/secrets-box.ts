import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { ConfigError, registerSecret } from '../errors/index.js';

/**
 * Seals what a platform stores of its tenants' own credentials, with AES-256-GCM under a key from
 * the environment (`CHECKOUT_SECRETS_KEY`), so that the store, its backups and a copy of its file
 * never hold them in clear.
 *
 * Rotation: the variable holds one key or several (separated by commas or spaces). The first seals;
 * every one opens. Put the new key first and keep the old one after it until `checkout-kit merchants
 * rekey` has re-sealed everything, then drop the old one.
 *
 * A sealed value is `v1.<key id>.<iv>.<ciphertext and tag>` (base64url). The key id (the first 8 hex
 * digits of the key's SHA-256) says which key opens it. Each value is bound to what it belongs to
 * (the tenant and environment, as additional authenticated data): one tenant's sealed credentials
 * copied onto another tenant's row do not open.
 */
export class SecretsBox {
  private readonly keys: ReadonlyArray<{ id: string; key: Buffer }>;

  /** `keys`: one or more 32-byte keys, the sealing one first. */
  constructor(keys: readonly Buffer[]) {
    if (keys.length === 0) throw new ConfigError(NO_KEY);
    this.keys = keys.map((key) => ({ id: keyIdOf(key), key }));
  }

  /** The box of `CHECKOUT_SECRETS_KEY`'s value; a clear error when it is unset or malformed. */
  static fromVariable(value: string | undefined): SecretsBox {
    const texts = (value ?? '').split(/[\s,]+/).filter(Boolean);
    if (texts.length === 0) throw new ConfigError(NO_KEY);
    return new SecretsBox(texts.map((text, index) => parseKey(text, index)));
  }

  /** Id of the key that seals. */
  get sealingKeyId(): string {
    return this.keys[0]!.id;
  }

  /** `plaintext` sealed with the first key, bound to `context`. */
  seal(plaintext: string, context: string): string {
    const { id, key } = this.keys[0]!;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return ['v1', id, iv.toString('base64url'), body.toString('base64url')].join('.');
  }

  /** The key id a sealed value names (without opening it). */
  static keyIdOf(sealed: string): string {
    return sealed.split('.')[1] ?? '';
  }

  /** Open a sealed value bound to `context`; throws `SecretsKeyError` when no key opens it. */
  open(sealed: string, context: string): string {
    const [version, id, iv, body] = sealed.split('.');
    if (version !== 'v1' || !id || !iv || !body) throw new SecretsKeyError(`the stored credentials of ${context} are not a sealed value this version reads.`);
    const entry = this.keys.find((candidate) => candidate.id === id);
    if (!entry) {
      throw new SecretsKeyError(
        `the stored credentials of ${context} were sealed with key ${id}, which CHECKOUT_SECRETS_KEY does not hold: while rotating, keep the old key after the new one until \`checkout-kit merchants rekey\` has run; with that key lost, \`checkout-kit merchants credentials --clear\` with that tenant and its --environment forgets them, and they can be stored again.`,
      );
    }
    const bytes = Buffer.from(body, 'base64url');
    try {
      const decipher = createDecipheriv('aes-256-gcm', entry.key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(bytes.subarray(bytes.length - 16));
      const plaintext = Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString('utf8');
      return plaintext;
    } catch (cause) {
      throw new SecretsKeyError(`the stored credentials of ${context} do not open with key ${id}: they were altered, or copied from another tenant.`, {
        cause,
      });
    }
  }
}

/** Stored credentials that cannot be opened: a missing rotation key, or a damaged or moved value. */
export class SecretsKeyError extends ConfigError {
  override name = 'SecretsKeyError';
}

const NO_KEY =
  "CHECKOUT_SECRETS_KEY is not set: tenants' own credentials are stored sealed with it. Generate one with `openssl rand -base64 32` and keep it apart from the store (a secret manager, the service unit's environment).";

function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

/** A 32-byte key written in base64 (44 characters) or hex (64 digits). */
function parseKey(text: string, index: number): Buffer {
  registerSecret(text);
  const key = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : /^[A-Za-z0-9+/_-]{43}=?$/.test(text) ? Buffer.from(text, 'base64') : undefined;
  if (key?.length !== 32) {
    throw new ConfigError(`CHECKOUT_SECRETS_KEY's key ${index + 1} is not 32 bytes in base64 or hex: generate one with \`openssl rand -base64 32\`.`);
  }
  return key;
}
