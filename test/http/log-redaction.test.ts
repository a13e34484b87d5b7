import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redactUrl } from '../../src/http/log-redaction.js';

describe('request URLs in logs', () => {
  it('hide the values of codes, tokens and secrets and keep everything else', () => {
    assert.equal(
      redactUrl('/demo/callback?code=sac_abc&state=xyz&iss=http%3A%2F%2Fx'),
      '/demo/callback?code=[redacted]&state=xyz&iss=http%3A%2F%2Fx',
    );
    assert.equal(redactUrl('/v1/users/me?access_token=sat_1'), '/v1/users/me?access_token=[redacted]');
    assert.equal(redactUrl('/x?REFRESH_TOKEN=a&client%5Fsecret=b&password=c'), '/x?REFRESH_TOKEN=[redacted]&client%5Fsecret=[redacted]&password=[redacted]');
    assert.equal(redactUrl('/oauth2/authorize?client_id=c&scope=read_profile'), '/oauth2/authorize?client_id=c&scope=read_profile');
    assert.equal(redactUrl('/oauth2/authorize?client_id=c&request_uri=urn%3Aietf%3Aparams%3Aoauth%3Arequest_uri%3Aspr_x'), '/oauth2/authorize?client_id=c&request_uri=[redacted]');
    assert.equal(redactUrl('/device?user_code=BCDF-GHJK'), '/device?user_code=[redacted]');
    // The way back after sign-in holds the authorization request, and its pushed request's handle.
    const back = '/oauth2/authorize?client_id=c&request_uri=urn%3Aietf%3Aparams%3Aoauth%3Arequest_uri%3Aspr_x';
    assert.equal(
      redactUrl(`/login?return_to=${encodeURIComponent(back)}&x=1`),
      `/login?return_to=${encodeURIComponent('/oauth2/authorize?client_id=c&request_uri=[redacted]')}&x=1`,
    );
    assert.equal(redactUrl(`/signup?return_to=${encodeURIComponent(`/login?return_to=${encodeURIComponent('/device?user_code=BCDF-GHJK')}`)}`), `/signup?return_to=${encodeURIComponent(`/login?return_to=${encodeURIComponent('/device?user_code=[redacted]')}`)}`);
    const plain = `/login?return_to=${encodeURIComponent('/dashboard?tab=apps')}`;
    assert.equal(redactUrl(plain), plain, 'a way back with nothing secret is logged as sent');
    assert.equal(redactUrl('/login?return_to=%E0%A4%A'), '/login?return_to=%E0%A4%A');
    assert.equal(redactUrl('/healthz'), '/healthz');
    assert.equal(redactUrl('/x?code'), '/x?code');
  });
});
