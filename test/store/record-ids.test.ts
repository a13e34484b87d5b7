/** Public ids of sleep sessions and weight measurements (store/record-ids.ts). */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { formatRecordId, newIdTag, parseRecordId } from '../../src/store/record-ids.js';

it('names the key it was made from, and nothing else', () => {
  for (const key of [{ time: 0, tag: 0 }, { time: 1_718_000_017, tag: newIdTag() }, { time: 253_402_300_799, tag: 2 ** 31 - 1 }]) {
    const id = formatRecordId('slp', key);
    assert.match(id, /^slp_[A-Za-z0-9_-]{14}$/);
    assert.deepEqual(parseRecordId('slp', id), key);
    assert.equal(parseRecordId('wgt', id), null, 'an id of another kind');
    assert.equal(parseRecordId('slp', `${id}=`), null);
    assert.equal(parseRecordId('slp', id.slice(0, -1)), null);
  }
  const id = formatRecordId('wgt', { time: 1_718_000_017, tag: 5 });
  // Other spellings of the same bytes (the unused bits of the last character set) name nothing.
  const last = id.at(-1)!;
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const sibling = alphabet[alphabet.indexOf(last) + 1]!;
  assert.equal(parseRecordId('wgt', id.slice(0, -1) + sibling), null);
  for (const bad of ['', 'wgt_', 'wgt_\u0000AAAAAAAAAAAAA', 'wgt_AAAAAAAAAAAAA+', 'wgt_AAAAAAAAAAAAA/', 'WGT_AAAAAAAAAAAAAA', 'wgt_//////////////']) {
    assert.equal(parseRecordId('wgt', bad), null, JSON.stringify(bad));
  }
  // A tag of 32 bits is never made: an id holding one names nothing.
  assert.equal(parseRecordId('wgt', formatRecordId('wgt', { time: 1, tag: 2 ** 31 })), null);
});

it('makes tags that fit a signed 32-bit column', () => {
  for (let i = 0; i < 1000; i++) {
    const tag = newIdTag();
    assert.ok(Number.isInteger(tag) && tag >= 0 && tag < 2 ** 31);
  }
});
