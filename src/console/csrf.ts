import { createHmac, randomBytes } from 'node:crypto';
import { tokenMatches } from '../access/token.js';

/** A form's one-time pair: `nonce` names the confirmation, `token` proves this console issued it for that action. */
export interface FormToken {
  nonce: string;
  token: string;
}

/**
 * CSRF protection for the console's POSTs. Each confirmation form carries a random nonce and an
 * HMAC of it (with a secret of this process) bound to the action: another site can make a browser
 * POST, but cannot read a page to learn a valid pair. A restart invalidates open forms.
 */
export class CsrfTokens {
  private readonly secret: Buffer;

  constructor(secret: Buffer = randomBytes(32)) {
    this.secret = secret;
  }

  issue(action: string): FormToken {
    const nonce = randomBytes(16).toString('base64url');
    return { nonce, token: this.sign(action, nonce) };
  }

  verify(action: string, nonce: string | undefined, token: string | undefined): boolean {
    if (!nonce || !token) return false;
    return tokenMatches(token, this.sign(action, nonce));
  }

  private sign(action: string, nonce: string): string {
    return createHmac('sha256', this.secret).update(`${action}\n${nonce}`).digest('base64url');
  }
}
