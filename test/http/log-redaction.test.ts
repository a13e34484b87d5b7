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
    assert.equal(redactUrl('/healthz'), '/healthz');
    assert.equal(redactUrl('/x?code'), '/x?code');
  });
});
