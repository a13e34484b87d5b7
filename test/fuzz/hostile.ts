/**
 * Hostile values for the route fuzzers: strings, numbers and JSON that parsers, validators,
 * databases and templates get wrong — NUL, lone surrogates, bidirectional and zero-width marks,
 * broken percent-escapes, injection probes, numbers at the edges of doubles, deep nesting, and
 * megabyte strings. Real credentials are mixed in as markers (world.ts) so requests get past
 * authentication.
 */
import fc from 'fast-check';
import { real, type RealName } from './world.js';

export const ONE_MEGABYTE = 1024 * 1024;

/** Strings that broke, or could break, something somewhere. */
const TRICKY = [
  '', ' ', '  x  ', '\u0000', 'a\u0000b', '\u0000'.repeat(8), '\uD800', '\uDFFF', 'x\uD83D', '\uDE00y', '\u202Eevil.exe',
  '\u200F\u200E', '\u200B', '\u2066x\u2069', '\uFEFF', '\u00A0', '\r\n', '\n', '\t', '\u001B[31m', '\u007F', '\u0085',
  '%', '%%', '%00', '%0', '%ZZ', '%E2%82', '%C0%AF', '%u2028', '+', '&', '=', '&=&', '?', '#', ';', ',', '"', "'", '\\',
  '€', '/€', 'é', 'ß', 'İ', 'ﬃ', '😀', '👩‍👩‍👧', '𝕏', '\u0301', 'ﷺ', '\u2028', 'Ω', '中文', 'עברית', 'العربية',
  "' OR '1'='1", "'; DROP TABLE users; --", '" OR ""="', '1) OR (1=1', '$1', '?1', ':name', '\\x00', "\\'",
  '<script>alert(1)</script>', '"><img src=x onerror=alert(1)>', "'-alert(1)-'", '{{7*7}}', '${7*7}', '<%= 7*7 %>', '<%~ it %>',
  '../../etc/passwd', '..%2F..%2F', '..\\..\\windows', '/', '//', '//evil.example', '/\\evil.example', '/%2F/evil.example',
  '\\\\evil.example', 'javascript:alert(1)', 'data:text/html,x', 'https://evil.example/cb', 'http://127.0.0.1:9/cb',
  '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf',
  'null', 'undefined', 'true', 'false', '[]', '{}', '[object Object]', 'NaN', 'Infinity', '-Infinity',
  '0', '-0', '-1', '1', '007', '1.5', '1e3', '1e309', '-1e309', '9007199254740993', '18446744073709551616', '0x1F', ' 42 ', '4\u200B2',
  'a'.repeat(101), 'a'.repeat(255), 'a'.repeat(4001), `${'a'.repeat(64)}@${'b'.repeat(190)}.example`,
];

/** Characters that stress encoders one at a time. */
const ODD_CHARACTERS = fc.constantFrom(
  '\u0000', '\uD800', '\uDC00', '\u202E', '\u200B', '\uFEFF', '%', '&', '=', '+', ';', '"', "'", '<', '>', '\\', '/', '#', '?', ' ',
  '\r', '\n', '€', '😀', '\u0301',
);

/** Any code point, lone surrogates included (fast-check's full-Unicode units build a table of every one first). */
const anyCodePoint = fc.integer({ min: 0, max: 0x10ffff }).map((codePoint) => String.fromCodePoint(codePoint));

const randomText = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 3, arbitrary: fc.string({ unit: anyCodePoint, maxLength: 30 }) },
  { weight: 3, arbitrary: fc.string({ unit: fc.oneof(ODD_CHARACTERS, fc.string({ minLength: 1, maxLength: 1 })), maxLength: 30 }) },
);

/** Long strings, up to a megabyte (past every body and field limit). */
export const hugeText = fc
  .tuple(
    fc.oneof({ weight: 1, arbitrary: fc.constant(ONE_MEGABYTE + 1) }, { weight: 9, arbitrary: fc.constantFrom(65_537, 8193, 4097, 1025) }),
    fc.constantFrom('a', '€', '\u0000', '%', '😀', '\uD800', '0', '=&'),
  )
  .map(([length, unit]) => unit.repeat(Math.ceil(length / unit.length)));

const numberText = fc.oneof(
  fc.integer().map(String),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
  fc.double().map(String),
  fc.integer({ min: 0, max: 4_000_000_000 }).map(String),
  // Unix seconds around now, on and off minute boundaries.
  fc.integer({ min: -3 * 86_400, max: 3 * 86_400 }).map((offset) => String(Math.floor(Date.now() / 1000) + offset)),
);

/** A real credential, sometimes damaged (suffixed, cut, case-flipped). */
export function realValue(names: readonly RealName[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...names).map(real) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...names), fc.constantFrom('x', '\u0000', ' ', '%00', '=', '€')).map(([name, tail]) => real(name) + tail) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('x', ' ', 'Bearer ', '\u0000'), fc.constantFrom(...names)).map(([head, name]) => head + real(name)) },
  );
}

/** Any string a hostile client might send; `hints` adds values that make sense for the field. */
export function hostileText(hints: fc.Arbitrary<string> | null = null): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 40, arbitrary: fc.constantFrom(...TRICKY) },
    { weight: 40, arbitrary: randomText },
    { weight: 20, arbitrary: numberText },
    { weight: hints ? 80 : 0, arbitrary: hints ?? fc.constant('') },
    // Few values are long: each costs the server (and this test) milliseconds.
    { weight: 1, arbitrary: hugeText },
  );
}

/** A field or parameter name: the route's own most of the time, then anything. */
export function hostileName(known: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: known.length > 0 ? 6 : 0, arbitrary: known.length > 0 ? fc.constantFrom(...known) : fc.constant('x') },
    { weight: 2, arbitrary: fc.constantFrom(...TRICKY.filter((s) => s.length < 100)) },
    { weight: 2, arbitrary: randomText },
    { weight: 1, arbitrary: fc.constantFrom('a[b]', 'a[]', 'a.b', 'a[0][1]', '__proto__[x]', 'constructor[prototype][x]', ' client_id', 'CLIENT_ID') },
  );
}

/** A JSON leaf: strings of every kind, numbers at the edges, booleans, null. */
const jsonLeaf: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileText() },
  { weight: 3, arbitrary: fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -0, 1e308, -1e308, 2 ** 53, 2 ** 53 + 2, 1000, 1001, 60, 59, 86_400)) },
  { weight: 1, arbitrary: fc.constantFrom(true, false, null) },
);

/** Any JSON value, nested a few levels, with hostile keys and leaves. */
export const hostileJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    jsonLeaf,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(hostileName([]), tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** JSON text that is not what `JSON.stringify` would make: deep nesting, prototype keys, bad syntax. */
export const hostileJsonText: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: 1, max: 50_000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth)),
  fc.integer({ min: 1, max: 50_000 }).map((depth) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)),
  fc.integer({ min: 1, max: 50_000 }).map((depth) => '['.repeat(depth)),
  fc.constantFrom(
    '', ' ', 'null', 'true', '0', '"x"', '[]', '{', '}', '{"a":1,}', "{'a':1}", '{"a":1}{"b":2}', '\uFEFF{}', '{"a":"\\ud800"}',
    '{"__proto__":{"isAdmin":true}}', '{"constructor":{"prototype":{"isAdmin":true}}}', '{"a":1e400}', '{"a":-0}',
    '{"a":123456789012345678901234567890}', '{"a":"\u0000"}', '{"a":NaN}', '{"a":Infinity}', '{"a" 1}', '\u0000',
    '{"samples":null}', '{"samples":{}}', '{"samples":[null]}', '{"samples":[[]]}', '{"samples":[{"start_time":1e400,"value":1}]}',
    '{"daily_step_goal":1e400}', '{"stride_length_cm":-0}', '{"timezone":"\\u0000"}', '{"display_name":"\\ud800"}',
  ),
  fc.string({ unit: fc.constantFrom('{', '}', '[', ']', '"', ':', ',', '\\', 'u', '0', ' ', 'a', '1', 'e', '-', '.') , maxLength: 60 }),
);
