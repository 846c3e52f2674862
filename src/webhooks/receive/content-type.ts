/** `application/json` or any `application/*+json`, with or without parameters. */
export function isJsonContentType(contentType: string): boolean {
  const semicolon = contentType.indexOf(';');
  const media = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  return media === 'application/json' || (media.startsWith('application/') && media.endsWith('+json'));
}
