import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redirectUriProblem, validateAppSettings } from '../../src/domain/apps.js';

describe('redirect URI registration rules', () => {
  const allowed = [
    'https://app.example.com/callback',
    'https://app.example.com/callback/',
    'https://app.example.com/cb?tenant=1',
    'http://localhost:8080/cb',
    'http://127.0.0.1/cb',
    'http://[::1]:9000/cb',
    'com.example.app:/oauth2redirect',
  ];
  for (const uri of allowed) {
    it(`allows ${uri}`, () => assert.equal(redirectUriProblem(uri), null));
  }
  const refused: Array<[string, RegExp]> = [
    ['http://app.example.com/cb', /https/],
    ['http://localhost.evil.com/cb', /https/],
    ['https://app.example.com/cb#x', /fragment/],
    ['https://user:pw@app.example.com/cb', /credentials/],
    ['javascript:alert(1)', /not allowed/],
    ['data:text/html,hi', /not allowed/],
    ['myapp:/cb', /reverse-domain/],
    ['/callback', /absolute/],
    ['', /absolute/],
    ['https://app.example.com/c\u0000b', /control characters/],
    ['https://app.example.com/c b', /spaces/],
  ];
  for (const [uri, pattern] of refused) {
    it(`refuses ${JSON.stringify(uri)}`, () => assert.match(redirectUriProblem(uri) ?? '', pattern));
  }
});

describe('app settings validation', () => {
  it('names the field of the first problem', () => {
    assert.equal(validateAppSettings({ name: '  ' })?.field, 'name');
    assert.equal(validateAppSettings({ name: 'x'.repeat(101) })?.field, 'name');
    assert.equal(validateAppSettings({ name: 'Steps\u0000' })?.field, 'name');
    assert.equal(validateAppSettings({ description: 'a\u0000b' })?.field, 'description');
    assert.equal(validateAppSettings({ description: 'a\u001bb' })?.field, 'description');
    assert.equal(validateAppSettings({ name: 'Steps', description: 'line one\r\n\tline two' }), null);
    assert.equal(validateAppSettings({ websiteUrl: 'ftp://x' })?.field, 'websiteUrl');
    // Stored and shown on every consent page: as long as a redirect URI may be, no longer.
    assert.equal(validateAppSettings({ websiteUrl: `https://a.example/${'x'.repeat(1982)}` }), null);
    assert.match(validateAppSettings({ websiteUrl: `https://a.example/${'x'.repeat(1983)}` })?.message ?? '', /2000 characters/);
    assert.equal(validateAppSettings({ redirectUris: [] })?.field, 'redirectUris');
    assert.equal(validateAppSettings({ scopes: [] })?.field, 'scopes');
    assert.match(validateAppSettings({ scopes: ['read_profile', 'root'] })?.message ?? '', /unknown scope "root"/);
    assert.equal(validateAppSettings({ name: 'Ok', redirectUris: ['https://a.example/cb'], scopes: ['read_activity'] }), null);
  });
});

describe('app names that could pass for another app', () => {
  const refused: Array<[string, RegExp]> = [
    ['Pace\u202eeoC', /invisible formatting characters/], // right-to-left override
    ['\u2067Pace Coach\u2069', /invisible formatting characters/], // isolates
    ['Pace\u200eCoach', /invisible formatting characters/], // left-to-right mark
    ['Pace\u200bCoach', /invisible formatting characters/], // zero-width space
    ['Pace\u200dCoach', /invisible formatting characters/], // zero-width joiner
    ['Pace\ufeffCoach', /invisible formatting characters/], // zero-width no-break space
    ['Pace\u2028Coach', /invisible formatting characters/], // line separator
    ['Pace\ud800Coach', /lone surrogate/],
    ['Pace\ufffdCoach', /U\+FFFD/],
  ];
  for (const [name, pattern] of refused) {
    it(`refuses ${JSON.stringify(name)}`, () => {
      const problem = validateAppSettings({ name });
      assert.equal(problem?.field, 'name');
      assert.match(problem.message, pattern);
    });
  }
  it('accepts names in any script, with emoji', () => {
    for (const name of ['Schrittzähler', 'خطوات', '歩数計', 'Pace Coach \u{1F3C3}']) assert.equal(validateAppSettings({ name }), null, name);
  });
});
