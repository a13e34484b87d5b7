/** RFC 8414 authorization server metadata. */
import type { Config } from '../config.js';
import { SUPPORTED_CHALLENGE_METHODS } from './pkce.js';
import { ALL_SCOPES } from '../domain/scopes.js';
import { SUPPORTED_GRANT_TYPES } from './token.js';
import { DPOP_ALGORITHMS } from './dpop.js';

export const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'];

export function authorizationServerMetadata(config: Config) {
  return {
    issuer: config.publicUrl,
    authorization_endpoint: `${config.authUrl}/oauth2/authorize`,
    token_endpoint: `${config.publicUrl}/oauth2/token`,
    revocation_endpoint: `${config.publicUrl}/oauth2/revoke`,
    introspection_endpoint: `${config.publicUrl}/oauth2/introspect`,
    // RFC 8628 §4.
    device_authorization_endpoint: `${config.publicUrl}/oauth2/device_authorization`,
    scopes_supported: ALL_SCOPES,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: SUPPORTED_GRANT_TYPES,
    token_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    revocation_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    introspection_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    code_challenge_methods_supported: [...SUPPORTED_CHALLENGE_METHODS],
    // RFC 9207: authorization responses carry `iss`.
    authorization_response_iss_parameter_supported: true,
    // RFC 9449 §5.1: exactly the algorithms a DPoP proof is verified with.
    dpop_signing_alg_values_supported: DPOP_ALGORITHMS,
    // RFC 9126 §5: PAR is offered to every client and required only of apps set to require it.
    pushed_authorization_request_endpoint: `${config.publicUrl}/oauth2/par`,
    require_pushed_authorization_requests: false,
    // RFC 8414 §2: only when clients may register (REGISTRATION=token or open).
    ...(config.registration.mode !== 'off' && { registration_endpoint: `${config.publicUrl}/oauth2/register` }),
    // RFC 8414 §2: the API reference Stride serves itself.
    service_documentation: `${config.publicUrl}/docs`,
  };
}
