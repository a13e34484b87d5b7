/**
 * The service's own name, reserved. An app called "Stride", or made by a developer called "Stride",
 * reads on the consent page as the service asking for the person's Stride account, above a
 * description the app wrote. So no app name and no display name (a developer's is shown as the app's
 * maker) may read as it: compared as a skeleton, in the manner of Unicode's confusable detection
 * (UTS #39 §4), not as typed.
 *
 * A name that mentions the service among words of its own ("Pace Coach for Stride", "Stride Tracker
 * for Runners") stays allowed: apps that work with Stride name it, and the consent page says who
 * made the app and that Stride did not. Only the name itself, or the name with generic words that
 * add nothing of the app's own ("Stride Official", "The Stride Team"), is refused.
 */

export const SERVICE_NAME = 'Stride';

/**
 * Letters of other scripts, and small capitals, that look like the Latin letters of the service's
 * name and of the generic words; NFKD already maps fullwidth, mathematical, circled and superscript
 * forms. `l` (and `1`, `|`) is read as `i`, as in many typefaces (and `I` is `i` once lower-cased).
 * A small part of Unicode's confusables.txt, enough for the words compared here.
 */
const LOOK_ALIKE_LETTERS: Readonly<Record<string, string>> = {
  // Cyrillic
  а: 'a', в: 'b', с: 'c', ԁ: 'd', е: 'e', һ: 'h', і: 'i', ӏ: 'l', ј: 'j', к: 'k', м: 'm', н: 'h', о: 'o', р: 'p', ԛ: 'q', г: 'r', ѕ: 's', т: 't', у: 'y', ү: 'y', х: 'x', ԝ: 'w',
  // Greek
  α: 'a', β: 'b', ϲ: 'c', ε: 'e', ι: 'i', ϳ: 'j', κ: 'k', ν: 'v', ο: 'o', ρ: 'p', τ: 't', υ: 'u', χ: 'x', ω: 'w',
  // Armenian
  օ: 'o', ս: 'u', հ: 'h',
  // Latin small capitals and other look-alikes
  ᴀ: 'a', ʙ: 'b', ᴄ: 'c', ᴅ: 'd', ᴇ: 'e', ɢ: 'g', ʜ: 'h', ɪ: 'i', ı: 'i', ɩ: 'i', ȷ: 'j', ᴊ: 'j', ᴋ: 'k', ʟ: 'l', ᴍ: 'm', ɴ: 'n', ᴏ: 'o', ᴘ: 'p', ʀ: 'r', ꜱ: 's', ᴛ: 't', ᴜ: 'u', ᴠ: 'v', ᴡ: 'w', ʏ: 'y', ᴢ: 'z', ɑ: 'a', ɡ: 'g',
};

/** Digits and signs written for letters ("Str1de", "$tride"). */
const LOOK_ALIKE_SIGNS: Readonly<Record<string, string>> = {
  '0': 'o', '1': 'l', '3': 'e', '4': 'a', '5': 's', '7': 't', '$': 's', '@': 'a', '!': 'i', '|': 'l', '+': 't',
};

/**
 * Words that add nothing of an app's own to the service's name: official-sounding, about the
 * service's accounts and staff, or a web address around it.
 */
const GENERIC_WORDS = [
  'official', 'app', 'apps', 'application', 'team', 'support', 'security', 'secure', 'safety', 'trust',
  'account', 'accounts', 'login', 'log', 'in', 'sign', 'signin', 'auth', 'oauth', 'id', 'identity', 'verify', 'verification', 'verified',
  'admin', 'administrator', 'staff', 'help', 'helpdesk', 'desk', 'service', 'services', 'system', 'notifications', 'billing', 'api',
  'the', 'by', 'from', 'my', 'your', 'inc', 'hq', 'tm', 'www', 'com', 'net', 'org', 'io',
];

/**
 * The name as a run of plain letters: NFKD (compatibility forms to their letters, accents apart),
 * then lower case, accents dropped, look-alikes folded, everything but letters dropped (spaces,
 * punctuation, invisible characters), "cl" read as the "d" it resembles, and then `l` as `i`.
 */
function skeleton(name: string, folds: ReadonlyArray<Readonly<Record<string, string>>>): string {
  const letters = [...name.normalize('NFKD').toLowerCase().replace(/\p{M}/gu, '')]
    .map((char) => folds.reduce((folded, fold) => fold[folded] ?? folded, char))
    .join('');
  return letters.replace(/\P{L}/gu, '').replaceAll('cl', 'd').replaceAll('l', 'i');
}

const LETTERS_ONLY = [LOOK_ALIKE_LETTERS];
const LETTERS_AND_SIGNS = [LOOK_ALIKE_SIGNS, LOOK_ALIKE_LETTERS];

const serviceSkeleton = skeleton(SERVICE_NAME, LETTERS_ONLY);
const genericSkeletons = [...new Set([serviceSkeleton, ...GENERIC_WORDS.map((word) => skeleton(word, LETTERS_ONLY))])];

/**
 * Whether `letters` is the service's name with nothing but generic words (or its name again) before
 * and after it. Word by word from the left, in linear time: a regular expression of these
 * overlapping words ("log", "in", "login") backtracks exponentially on a name made to fail late.
 */
function isServiceNameWithGenericWords(letters: string): boolean {
  // before[i]: letters[0, i) is generic words only; after[i]: the service's name is among them.
  const before = new Array<boolean>(letters.length + 1).fill(false);
  const after = new Array<boolean>(letters.length + 1).fill(false);
  before[0] = true;
  for (let i = 0; i < letters.length; i++) {
    if (!before[i] && !after[i]) continue;
    for (const word of genericSkeletons) {
      if (!letters.startsWith(word, i)) continue;
      if (before[i]) before[i + word.length] = true;
      if (after[i] || word === serviceSkeleton) after[i + word.length] = true;
    }
  }
  return after[letters.length]!;
}

/**
 * Whether `name` reads as the service's own name. Digits and signs are read both as letters and as
 * nothing: "Str1de" is "stride", and so is "Stride 2" or "Stride!".
 */
export function readsAsServiceName(name: string): boolean {
  return isServiceNameWithGenericWords(skeleton(name, LETTERS_ONLY)) || isServiceNameWithGenericWords(skeleton(name, LETTERS_AND_SIGNS));
}

/** Why `name` cannot be `field` (an app's name, a display name), or null. */
export function reservedNameProblem(field: string, name: string): string | null {
  return readsAsServiceName(name)
    ? `${field} must not read as "${SERVICE_NAME}", the name of this service: people would take it for ${SERVICE_NAME} itself`
    : null;
}
