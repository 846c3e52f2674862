import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Canary secrets in the spec's formats, and a scan of every captured text for them. Each canary
 * has its own random part, searched for as well (the first 12 characters), so a secret printed in
 * part (sliced, or with its prefix cut off) is found too.
 */
export interface Canary {
  name: string;
  value: string;
  /** Distinctive substrings that must not appear either. */
  parts: string[];
}

function token(bytes = 12): string {
  return randomBytes(bytes).toString('hex');
}

export function makeCanaries() {
  const mk = token();
  const ms = token();
  const ik = token();
  const pk = token();
  const ps = token();
  const console = token();
  const whsec = randomBytes(24).toString('base64');
  const secretsKey = randomBytes(32).toString('base64');
  const values = {
    CHECKOUT_API_KEY: `svc_mk_test_canaryMK${mk}`,
    CHECKOUT_SIGNING_SECRET: `svc_ms_canaryMS${ms}`,
    CHECKOUT_INVOICE_KEY: `test_canaryIK${ik}`,
    CHECKOUT_PARTNER_API_KEY: `svc_pk_test_canaryPK${pk}`,
    CHECKOUT_PARTNER_SIGNING_SECRET: `svc_ps_canaryPS${ps}`,
    CHECKOUT_WEBHOOK_SECRET: `whsec_${whsec}`,
    CHECKOUT_CONSOLE_TOKEN: `canary-token-${console}`,
    CHECKOUT_SECRETS_KEY: secretsKey,
  };
  const canaries: Canary[] = [
    { name: 'CHECKOUT_API_KEY', value: values.CHECKOUT_API_KEY, parts: [mk.slice(0, 12)] },
    { name: 'CHECKOUT_SIGNING_SECRET', value: values.CHECKOUT_SIGNING_SECRET, parts: [ms.slice(0, 12)] },
    { name: 'CHECKOUT_INVOICE_KEY', value: values.CHECKOUT_INVOICE_KEY, parts: [ik.slice(0, 12)] },
    { name: 'CHECKOUT_PARTNER_API_KEY', value: values.CHECKOUT_PARTNER_API_KEY, parts: [pk.slice(0, 12)] },
    { name: 'CHECKOUT_PARTNER_SIGNING_SECRET', value: values.CHECKOUT_PARTNER_SIGNING_SECRET, parts: [ps.slice(0, 12)] },
    // The base64 part is the HMAC key itself: it must not appear without its prefix either.
    { name: 'CHECKOUT_WEBHOOK_SECRET', value: values.CHECKOUT_WEBHOOK_SECRET, parts: [whsec, whsec.slice(0, 12)] },
    { name: 'CHECKOUT_CONSOLE_TOKEN', value: values.CHECKOUT_CONSOLE_TOKEN, parts: [console.slice(0, 12)] },
    { name: 'CHECKOUT_SECRETS_KEY', value: secretsKey, parts: [secretsKey.slice(0, 16)] },
  ];
  return { values, canaries };
}

/** The secrets a sandbox generated for its seeded accounts (credentials.json), as canaries. */
export function sandboxSecrets(credentials: {
  webhookSecret: string;
  test: { partner: { apiKey: string; signingSecret: string }; merchant: { apiKey: string; signingSecret: string; invoiceKey: string } };
  live: { partner: { apiKey: string; signingSecret: string }; merchant: { apiKey: string; signingSecret: string; invoiceKey: string } };
}): Canary[] {
  const randomPart = (key: string) => key.replace(/^(svc_(?:pk|mk)_(?:test|live)_|svc_(?:ps|ms)_|(?:test|live)_)/, '');
  const out: Canary[] = [];
  for (const environment of ['test', 'live'] as const) {
    const { partner, merchant } = credentials[environment];
    for (const [name, value] of Object.entries({ ...partner, ...Object.fromEntries(Object.entries(merchant).filter(([key]) => key !== 'merchantId')) })) {
      out.push({ name: `sandbox ${environment} ${name}`, value, parts: [randomPart(value).slice(0, 12)] });
    }
  }
  const base64 = credentials.webhookSecret.replace(/^whsec_/, '');
  out.push({ name: 'sandbox webhookSecret', value: credentials.webhookSecret, parts: [base64, base64.slice(0, 12)] });
  return out;
}

/** Every file under `dir` (recursively), as [relative path, text]. */
export function filesUnder(dir: string): Array<{ path: string; text: string }> {
  const out: Array<{ path: string; text: string }> = [];
  const walk = (current: string) => {
    for (const name of readdirSync(current)) {
      const path = join(current, name);
      const stat = statSync(path, { throwIfNoEntry: false });
      if (!stat) continue;
      if (stat.isDirectory()) walk(path);
      else if (stat.isFile()) out.push({ path: relative(dir, path) || name, text: readFileSync(path).toString('latin1') });
    }
  };
  walk(dir);
  return out;
}

export interface Finding {
  canary: string;
  needle: string;
  where: string;
  context: string;
}

/** Every occurrence of every canary (and its parts) in every text. */
export function findSecrets(texts: Array<{ where: string; text: string }>, canaries: Canary[]): Finding[] {
  const findings: Finding[] = [];
  for (const { where, text } of texts) {
    for (const canary of canaries) {
      for (const needle of [canary.value, ...canary.parts]) {
        let index = text.indexOf(needle);
        while (index !== -1) {
          findings.push({
            canary: canary.name,
            needle: needle === canary.value ? 'full value' : 'part',
            where,
            context: text.slice(Math.max(0, index - 80), index + needle.length + 40),
          });
          index = text.indexOf(needle, index + 1);
          if (findings.length > 200) return findings;
        }
      }
    }
  }
  return findings;
}
