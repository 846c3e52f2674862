import { isUtf8 } from 'node:buffer';
import type { BodyDamage } from './damages.js';
import { escapeNonAscii, inDocumentedOrder, isObject, minifyJson, parseJson } from './json-text.js';

/** Candidate originals of a damaged body; each is verified against the signature in turn. */
export type BodyRepair = (received: Buffer) => Array<string | Buffer>;

function percentDecoded(text: string): string[] {
  const out: string[] = [];
  for (const plusIsSpace of [true, false]) {
    try {
      out.push(decodeURIComponent(plusIsSpace ? text.replace(/\+/g, ' ') : text));
    } catch {
      // Not valid percent-encoding this way.
    }
  }
  return out;
}

/**
 * How to undo each kind of damage to the bytes. The service sends compact JSON with non-ASCII as
 * UTF-8 (what `JSON.stringify` writes) in the documented key order, so a re-serialised body is
 * rewritten that way (and with escaped non-ASCII, for services that escape). The narrowest repair
 * comes first: a trailing newline is also "whitespace" to a JSON re-serialisation.
 */
export const BODY_REPAIRS: Record<BodyDamage, BodyRepair> = {
  'trailing-newline': (received) => {
    const text = received.toString('latin1');
    const trimmed = text.replace(/[\r\n]+$/, '');
    const out: Buffer[] = [Buffer.concat([received, Buffer.from('\n')])];
    if (trimmed.length < text.length) out.unshift(received.subarray(0, trimmed.length));
    return out;
  },

  'reserialised-json': (received) => {
    if (!isUtf8(received)) return [];
    const text = received.toString('utf8');
    const parsed = parseJson(text);
    if (parsed === undefined) return [];
    const compact = JSON.stringify(parsed);
    const documented = JSON.stringify(inDocumentedOrder(parsed));
    return [minifyJson(text), compact, documented, escapeNonAscii(compact), escapeNonAscii(documented)];
  },

  charset: (received) => {
    if (!isUtf8(received)) {
      // UTF-8 text written out as latin1 (one byte per character): read it back as latin1.
      return [Buffer.from(received.toString('latin1'), 'utf8')];
    }
    const text = received.toString('utf8');
    // UTF-8 bytes read as latin1 and written back as UTF-8 ("Ã©" for "é"): only latin1 characters then.
    if (/[\u0080-\u00ff]/.test(text) && !/[^\u0000-\u00ff]/.test(text)) return [Buffer.from(text, 'latin1')];
    return [];
  },

  'form-encoded': (received) => {
    const text = received.toString('utf8');
    const out: string[] = [];
    // `payload=<percent-encoded JSON>`: the body sent (or rewritten) as a form field.
    const field = /^[A-Za-z0-9_.-]+=([^&]*)$/.exec(text);
    if (field) out.push(...percentDecoded(field[1]!));
    // The whole body percent-encoded.
    if (/%[0-9A-Fa-f]{2}/.test(text)) out.push(...percentDecoded(text));
    // A form parser took the JSON for a field name ({"<json>": ""}) and the app re-serialised that.
    const parsed = parseJson(text);
    if (parsed !== undefined && isObject(parsed)) {
      const keys = Object.keys(parsed);
      if (keys.length === 1 && (parsed[keys[0]!] === '' || parsed[keys[0]!] === null)) out.push(keys[0]!);
    }
    return out;
  },
};
