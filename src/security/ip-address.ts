/**
 * IPv6 literals as numbers, for the code that judges addresses: the per-address rate-limit key
 * (http/address-key.ts) and the webhook target check (webhooks/public-address.ts).
 */

/**
 * The eight 16-bit groups of an IPv6 literal, `::` expanded and a dotted-quad tail included
 * (RFC 4291 §2.2), a zone (`%eth0`) left out; null for anything else.
 */
export function ipv6Groups(address: string): number[] | null {
  let text = address.split('%')[0]!.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  const groups = tail === undefined ? front : [...front, ...new Array<number>(Math.max(0, 8 - front.length - back.length)).fill(0), ...back];
  return groups.length === 8 && groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff) ? groups : null;
}

/** The dotted IPv4 address held by two 16-bit groups. */
export const ipv4Of = (high: number, low: number): string => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
