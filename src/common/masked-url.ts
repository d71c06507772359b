// Outbound URLs set by tenants (a CRM destination, a webhook channel) often carry a token in their
// query string (`?key=…`): views show them with the query string replaced by `?…`, and no write
// accepts such a masked value back (a client that PATCHes what it read would replace a working URL
// with a broken one).

/** The masking mark: U+2026, also recognised percent-encoded. */
const MARK = "…";
const ENCODED_MARK = /%E2%80%A6/i;

/** `https://hooks.example/x?token=abc` ⇒ `https://hooks.example/x?…`; a URL without a query string is left as is. */
export function maskQuery(url: string): string;
export function maskQuery(url: string | null): string | null;
export function maskQuery(url: string | null): string | null {
  if (url === null) return null;
  const query = url.indexOf("?");
  const fragment = url.indexOf("#");
  if (query === -1 || (fragment !== -1 && fragment < query)) return url;
  return `${url.slice(0, query)}?${MARK}`;
}

/** True for a value that holds the masking mark (a URL read from a view). */
export function isMasked(value: string): boolean {
  return value.includes(MARK) || ENCODED_MARK.test(value);
}
