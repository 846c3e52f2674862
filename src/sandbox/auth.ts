import type { FastifyRequest } from 'fastify';
import { checkRequestSignature } from '../client/signer.js';
import type { Environment } from '../schemas/index.js';
import { forbidden, unauthorized } from './http-error.js';
import type { MerchantRecord, PartnerAccount, SandboxData } from './records.js';

/** The kinds of API key (spec section 5). */
export type KeyKind = 'partner' | 'merchant' | 'invoice';

const KEY_KINDS: Array<{ kind: KeyKind; pattern: RegExp; name: string }> = [
  { kind: 'partner', pattern: /^svc_pk_(test|live)_/, name: 'a partner key (svc_pk_…)' },
  { kind: 'merchant', pattern: /^svc_mk_(test|live)_/, name: 'a merchant key (svc_mk_…)' },
  { kind: 'invoice', pattern: /^(test|live)_/, name: 'an invoice key (test_… / live_…)' },
];

export interface PartnerCaller {
  kind: 'partner';
  environment: Environment;
  partner: PartnerAccount;
}

export interface MerchantCaller {
  kind: 'merchant' | 'invoice';
  environment: Environment;
  merchant: MerchantRecord;
}

function bearerOf(request: FastifyRequest): string {
  const header = request.headers.authorization;
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!match) throw unauthorized('Send the API key as "Authorization: Bearer <key>".');
  return match[1]!;
}

/** Which kind a key is and its environment (from the prefix), or 401 for an unknown format. */
function classify(key: string, expected: KeyKind): { kind: KeyKind; environment: Environment } {
  const found = KEY_KINDS.find((k) => k.pattern.test(key));
  if (!found) throw unauthorized('The API key has an unknown format.');
  if (found.kind !== expected) {
    const want = KEY_KINDS.find((k) => k.kind === expected)!;
    throw forbidden(`This operation takes ${want.name}, not ${found.name}.`);
  }
  return { kind: found.kind, environment: found.pattern.exec(key)![1] as Environment };
}

/** Contract 3b: `X-Request-Signature` over `<t>.<METHOD>.<path with query>.<raw body>`. */
function checkSignature(request: FastifyRequest, rawBody: string, secret: string): void {
  const header = request.headers['x-request-signature'];
  const reason = checkRequestSignature({
    header: typeof header === 'string' ? header : undefined,
    method: request.method,
    path: request.url,
    body: rawBody,
    secret,
  });
  if (reason) throw unauthorized(`${reason}.`);
}

/** Authenticate a partner operation: partner key and a valid request signature. */
export function authenticatePartner(data: SandboxData, request: FastifyRequest, rawBody: string): PartnerCaller {
  const key = bearerOf(request);
  const { environment } = classify(key, 'partner');
  const partner = data.partners.find((p) => p.apiKey === key);
  if (!partner) throw unauthorized('Unknown partner API key.');
  checkSignature(request, rawBody, partner.signingSecret);
  return { kind: 'partner', environment, partner };
}

/** Whether the request carries a partner's key (`svc_pk_…`): it is then authenticated as the partner. */
export function isPartnerKey(request: FastifyRequest): boolean {
  return /^Bearer\s+svc_pk_/i.test(request.headers.authorization ?? '');
}

/**
 * Authenticate a merchant operation: a `svc_mk_` key plus a signature for payments, a `test_` /
 * `live_` key (bearer only) for invoices.
 */
export function authenticateMerchant(data: SandboxData, request: FastifyRequest, rawBody: string, kind: 'merchant' | 'invoice'): MerchantCaller {
  const key = bearerOf(request);
  const { environment } = classify(key, kind);
  const merchant = data.merchants.find((m) => (kind === 'merchant' ? m.keys?.apiKey : m.keys?.invoiceKey) === key);
  if (!merchant?.keys) throw unauthorized(`Unknown ${kind === 'merchant' ? 'merchant API' : 'invoice'} key.`);
  if (kind === 'merchant') checkSignature(request, rawBody, merchant.keys.signingSecret);
  return { kind, environment, merchant };
}
