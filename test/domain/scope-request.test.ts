import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FITBIT_SCOPE_WORDS } from '../../src/domain/fitbit-scopes.js';
import { answeredScope, readScopeRequest, unheldWords } from '../../src/domain/scope-request.js';
import { ALL_SCOPES, isScope } from '../../src/domain/scopes.js';

describe("a request's scope in Stride's names and Fitbit's words", () => {
  it("maps Fitbit's five words of data Stride holds to Stride's scopes, and every other word to none", () => {
    for (const scopes of Object.values(FITBIT_SCOPE_WORDS)) for (const scope of scopes) assert.ok(isScope(scope), scope);
    const held = Object.entries(FITBIT_SCOPE_WORDS).filter(([, scopes]) => scopes.length > 0).map(([word]) => word);
    assert.deepEqual(held.sort(), ['activity', 'heartrate', 'profile', 'sleep', 'weight']);
  });

  it('reads the words within the scopes allowed, in canonical order, remembering the words as sent', () => {
    assert.deepEqual(readScopeRequest('sleep  activity nutrition sleep', ALL_SCOPES), {
      ok: true,
      scopes: ['read_activity', 'read_sleep', 'write_sleep'],
      worded: 'sleep activity nutrition',
    });
    assert.deepEqual(readScopeRequest('read_profile read_activity', ALL_SCOPES), { ok: true, scopes: ['read_profile', 'read_activity'], worded: null });
    assert.deepEqual(readScopeRequest('weight heartrate', ['read_body', 'read_activity']), { ok: true, scopes: ['read_body'], worded: 'weight heartrate' });
  });

  it('refuses an unknown part, a Stride scope not allowed, and a request of nothing allowed', () => {
    assert.deepEqual(readScopeRequest('activity steps', ALL_SCOPES), { ok: false, problem: 'unknown', scope: 'steps' });
    assert.deepEqual(readScopeRequest('activity read_sleep', ['read_activity']), { ok: false, problem: 'not_allowed', scope: 'read_sleep' });
    assert.deepEqual(readScopeRequest('nutrition heartrate', ['read_activity']), { ok: false, problem: 'nothing' });
    assert.deepEqual(readScopeRequest('', ALL_SCOPES), { ok: false, problem: 'nothing' });
  });

  it('answers in the words asked that the token holds, and in Stride names for a request without words', () => {
    assert.equal(answeredScope('read_activity read_sleep', 'sleep activity nutrition heartrate read_profile'), 'sleep activity nutrition');
    assert.equal(answeredScope('read_profile read_activity', null), 'read_profile read_activity');
    assert.deepEqual(unheldWords('sleep nutrition social'), ['nutrition', 'social']);
    assert.deepEqual(unheldWords(null), []);
  });
});
