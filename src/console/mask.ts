/** An e-mail address anywhere in a text (good enough to find what must be hidden, not to validate). */
const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;

/** `buyer@example.com` → `b•••@e•••.com`: enough to tell addresses apart, not to read them. */
export function maskEmail(address: string): string {
  const at = address.lastIndexOf('@');
  if (at < 1) return '•••';
  const domain = address.slice(at + 1);
  const dot = domain.lastIndexOf('.');
  const tld = dot === -1 ? '' : domain.slice(dot);
  return `${address[0]}•••@${domain[0] ?? ''}•••${tld}`;
}

/** Every e-mail address in `text` masked, unless the operator asked to `reveal` them. */
export function maskEmails(text: string, reveal = false): string {
  return reveal ? text : text.replace(EMAIL, maskEmail);
}
