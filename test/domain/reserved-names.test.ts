/**
 * The service's name is reserved (src/domain/reserved-names.ts): no app and no developer may be
 * called anything that reads as "Stride" on a consent page — in any letter case or spacing, with
 * punctuation or invisible characters, in look-alike letters of other scripts, fullwidth or
 * mathematical forms, digits for letters, or with generic words around it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEMO_APP_NAME } from '../../src/cli/demo.js';
import { readsAsServiceName } from '../../src/domain/reserved-names.js';

describe('names that read as the service', () => {
  it('refuses Stride however it is spelled', () => {
    for (const name of [
      'Stride', 'stride', 'STRIDE', '  Stride  ', 'S t r i d e', 'S.T.R.I.D.E.', 'Stride™', 'Stride®', 'Stride!', 'Stride 2', '«Stride»',
      'Str\u200bide', 'Stri\u00addé', // zero-width space, soft hyphen
      'Ｓｔｒｉｄｅ', '𝐒𝐭𝐫𝐢𝐝𝐞', 'ⓈⓉⓇⒾⒹⒺ', 'ꜱᴛʀɪᴅᴇ', // fullwidth, mathematical bold, circled, small capitals
      '\u0405tr\u0456d\u0435', 'Strid\u0435', 'Str\u03b9de', 'S\u0442ride', // Cyrillic Ѕ і е, Cyrillic е, Greek ι, Cyrillic т
      'Stri\u0301de', 'Strídé', 'Str1de', 'Strlde', 'StrIde', 'Str!de', '$tride', '5tride', 'Stricle',
    ]) assert.equal(readsAsServiceName(name), true, JSON.stringify(name));
  });

  it('refuses Stride with generic words around it, which still read as the service', () => {
    for (const name of [
      'Stride Official', 'Official Stride App', 'Stride App', 'Stride Team', 'The Stride Team', 'Stride Support', 'Stride Security',
      'Stride Account', 'Stride Accounts Team', 'stride-app', 'Stride Support Team', 'Stride 0fficial', 'Stride Sign-in', 'stride.com',
      'Ѕtride Ѕecurity', 'Stride Help Desk', 'Stride Admin',
    ]) assert.equal(readsAsServiceName(name), true, JSON.stringify(name));
  });

  it('allows longer names that mention Stride among words of their own, and every other name', () => {
    for (const name of [
      'Stride Tracker for Runners', 'Pace Coach for Stride', DEMO_APP_NAME, 'Strider', 'Astride', 'Stridewise', 'Pace Coach',
      'Schrittzähler', '歩数計', 'Ada Developer', 'Stride 跑步',
    ]) assert.equal(readsAsServiceName(name), false, JSON.stringify(name));
  });
});
