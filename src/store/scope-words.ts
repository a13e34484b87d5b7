/**
 * A grant's, a token's or a code's scope is one string of space-separated names. Whether it holds
 * a scope is asked in SQL as a whole-word LIKE on the string padded with spaces, so that `read_sleep`
 * never matches inside another name; `_` and `%` are escaped, as LIKE takes them for wildcards.
 */
import { sql, type RawBuilder } from 'kysely';

/** The LIKE pattern of `scope` as a whole word (holdsScope takes it). */
export function scopeWordPattern(scope: string): string {
  return `% ${scope.replace(/[\\%_]/g, (c) => `\\${c}`)} %`;
}

/** `column`, a space-separated scope string, holds the scope of `pattern` (scopeWordPattern). */
export function holdsScope(column: string, pattern: string): RawBuilder<boolean> {
  return sql<boolean>`(' ' || ${sql.ref(column)} || ' ') like ${pattern} escape '\\'`;
}
