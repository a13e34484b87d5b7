/** `?` placeholders numbered for PostgreSQL (`$1`, `$2`, …); the statements given here have no other `?`. */
export function numberedPlaceholders(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}
