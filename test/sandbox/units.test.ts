import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { base58, evmAddress, tronAddress } from '../../src/sandbox/addresses.js';
import { excessOf, halfOf, remainingOf, statusOf, surplusOf } from '../../src/sandbox/amounts.js';
import { DEFAULT_NETWORKS, selectRoutes } from '../../src/sandbox/networks.js';
import { resolveOptions } from '../../src/sandbox/options.js';
import { createRng, decideFaults, shuffle } from '../../src/sandbox/webhooks/faults.js';
import { ConfigError } from '../../src/errors/index.js';
import { UUID_RE } from './helpers.js';

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** Independent base58 decoder, to check the checksum of generated Tron addresses. */
function decodeBase58(text: string): Buffer {
  let n = 0n;
  for (const c of text) n = n * 58n + BigInt(ALPHABET.indexOf(c));
  const hex = n.toString(16).padStart(50, '0');
  return Buffer.from(hex, 'hex');
}

describe('addresses', () => {
  it('EVM: 0x and 40 hex digits, distinct each time', () => {
    const a = evmAddress();
    expect(a).toMatch(/^0x[0-9a-f]{40}$/);
    expect(evmAddress()).not.toBe(a);
  });

  it('Tron: base58check of 0x41 + 20 bytes, 34 characters starting with T', () => {
    for (let i = 0; i < 50; i++) {
      const address = tronAddress();
      expect(address).toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
      const bytes = decodeBase58(address);
      expect(bytes).toHaveLength(25);
      expect(bytes[0]).toBe(0x41);
      const payload = bytes.subarray(0, 21);
      const checksum = createHash('sha256').update(createHash('sha256').update(payload).digest()).digest().subarray(0, 4);
      expect(bytes.subarray(21).equals(checksum)).toBe(true);
    }
  });

  it('base58 keeps leading zero bytes as 1s', () => {
    expect(base58(Buffer.from([0, 0, 1]))).toBe('112');
  });
});

describe('amounts', () => {
  it('status follows the amounts; expiry only matters while nothing arrived', () => {
    expect(statusOf('10', '0', false)).toBe('CREATED');
    expect(statusOf('10', '0', true)).toBe('EXPIRED');
    expect(statusOf('10', '9.999999', true)).toBe('PARTIALLY_PAID');
    expect(statusOf('10', '10.000', false)).toBe('PAID');
    expect(statusOf('10', '10.000001', true)).toBe('OVERPAID');
  });

  it('remaining, surplus, half and excess are exact and keep the scale', () => {
    expect(remainingOf('25.00', '0')).toBe('25.00');
    expect(remainingOf('0.3', '0.1')).toBe('0.2');
    expect(surplusOf('1', '1.000000000000000001')).toBe('0.000000000000000001');
    expect(remainingOf('1', '2')).toBe('0');
    expect(halfOf('25.00')).toBe('12.50');
    expect(halfOf('0.000001')).toBe('0.000001');
    expect(halfOf('0.000003')).toBe('0.000001');
    expect(excessOf('12.50', '25.00')).toBe('15.00');
    expect(excessOf('0', '0.000001')).toBe('0.000001');
  });
});

describe('networks', () => {
  it('limits by networkId and token, with the 422 codes when nothing is left', () => {
    const test = DEFAULT_NETWORKS.test;
    expect(selectRoutes(test, {})).toHaveLength(2);
    const usdc = selectRoutes(test, { token: 'usdc' });
    expect(Array.isArray(usdc) && usdc.map((r) => [r.network.networkId, r.tokens.map((t) => t.symbol)])).toEqual([[11155111, ['USDC']]]);
    expect(selectRoutes(test, { networkId: 1 })).toMatchObject({ code: 'network_not_available' });
    expect(selectRoutes(test, { token: 'DAI' })).toMatchObject({ code: 'token_not_available' });
    expect(selectRoutes(test, { networkId: 3448148188, token: 'USDC' })).toMatchObject({ code: 'token_not_available' });
    expect(DEFAULT_NETWORKS.live.map((n) => n.networkId)).toEqual([1, 728126428]);
  });
  // the live Tron chainId had 13 digits in its last group, so no client could read it.
  it('every default network has a UUID chainId', () => {
    for (const network of [...DEFAULT_NETWORKS.test, ...DEFAULT_NETWORKS.live]) expect(network.chainId, network.chainName).toMatch(UUID_RE);
  });

  it('networks with a chainId that is not a UUID are a ConfigError', () => {
    const tron = { ...DEFAULT_NETWORKS.live[1]!, chainId: '3f6e1d9c-8b2a-4c5d-a7e0-0000728126428' };
    expect(() => resolveOptions({ networks: { live: [tron] } })).toThrow(/networks\.live: chainId .* of Tron is not a UUID/);
  });
});

describe('fault injection', () => {
  it('the PRNG and shuffle replay for one seed and differ across seeds', () => {
    const run = (seed: number) => {
      const rng = createRng(seed);
      return [rng(), rng(), shuffle([1, 2, 3, 4, 5, 6, 7, 8], rng)];
    };
    expect(run(9)).toEqual(run(9));
    expect(run(9)).not.toEqual(run(10));
  });

  it('probabilities 0 and 1 are never and always', () => {
    const rng = createRng(1);
    for (let i = 0; i < 100; i++) {
      expect(decideFaults(rng, { drop: 0, duplicate: 1, staleTimestamp: 0 })).toEqual({ drop: false, duplicate: true, stale: false });
    }
  });
});

describe('options', () => {
  it('checks options up front with documented defaults', () => {
    const options = resolveOptions({});
    expect(options).toMatchObject({ host: '127.0.0.1', port: 0, dataDir: '.sandbox', expiresAfterMs: 1_800_000, retry: { baseDelayMs: 200, maxAttempts: 6 } });
    expect(() => resolveOptions({ faults: { drop: 2 } })).toThrow(ConfigError);
    expect(() => resolveOptions({ host: '0.0.0.0' })).toThrow(/loopback/);
    expect(() => resolveOptions({ webhookUrls: ['ftp://x'] })).toThrow(ConfigError);
  });
});
