/**
 * Secrets known to the process (registered when configuration is read) are scrubbed from every
 * error message and log line. Patterns catch key-shaped strings that were never registered.
 */
const known = new Set<string>();

const SECRET_PATTERNS: RegExp[] = [
  /\bsvc_(?:pk|mk)_(?:test|live)_[A-Za-z0-9_-]+/g,
  /\bsvc_(?:ps|ms)_[A-Za-z0-9_-]+/g,
  /\bwhsec_[A-Za-z0-9+/=_-]+/g,
  /\b(?:test|live)_[A-Za-z0-9]{16,}/g,
  /\bBearer\s+[A-Za-z0-9._~+/=-]+/gi,
];

/** Remember a secret so that `redact` removes it wherever it appears. Short strings are ignored. */
export function registerSecret(secret: string | undefined): void {
  if (secret && secret.length >= 8) known.add(secret);
}

/** Replace every known secret and key-shaped string in `text` with `[redacted]`. */
export function redact(text: string): string {
  let out = text;
  for (const secret of known) out = out.split(secret).join('[redacted]');
  for (const pattern of SECRET_PATTERNS) out = out.replace(pattern, '[redacted]');
  return out;
}
