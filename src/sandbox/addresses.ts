import { createHash, randomBytes } from 'node:crypto';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** Bitcoin-style base58 of `bytes` (leading zero bytes become '1'). */
export function base58(bytes: Uint8Array): string {
  let value = BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);
  let out = '';
  while (value > 0n) {
    out = BASE58[Number(value % 58n)]! + out;
    value /= 58n;
  }
  for (const byte of bytes) {
    if (byte !== 0) break;
    out = `1${out}`;
  }
  return out;
}

function sha256(bytes: Uint8Array): Buffer {
  return createHash('sha256').update(bytes).digest();
}

/** A random EVM address: `0x` + 40 lower-case hex digits (valid without an EIP-55 checksum). */
export function evmAddress(): string {
  return `0x${randomBytes(20).toString('hex')}`;
}

/** A random Tron address: base58check of 0x41 + 20 bytes, 34 characters starting with `T`. */
export function tronAddress(): string {
  const payload = Buffer.concat([Buffer.from([0x41]), randomBytes(20)]);
  const checksum = sha256(sha256(payload)).subarray(0, 4);
  return base58(Buffer.concat([payload, checksum]));
}

/** A fresh deposit address of `family`. */
export function newAddress(family: 'evm' | 'tron'): string {
  return family === 'evm' ? evmAddress() : tronAddress();
}

/** A fake transaction hash as the family writes it (Tron without `0x`). */
export function newTxHash(family: 'evm' | 'tron'): string {
  const hex = randomBytes(32).toString('hex');
  return family === 'evm' ? `0x${hex}` : hex;
}

/** `0x1234…abcd`: the display form of a wallet address. */
export function shortAddress(address: string): string {
  return address.length > 12 ? `${address.slice(0, 6)}…${address.slice(-4)}` : address;
}
