/**
 * The machine-readable API: an OpenAPI 3.1 document made from the routes' own schemas
 * (`GET /openapi.json`) and a reference to read it, `/docs` (Swagger UI, its assets served by Stride
 * itself). The pages for people (sign-in, consent, dashboard, account) are not part of it.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { ERROR_SCHEMA } from './schemas.js';

/** The paths a program calls; everything else is a page (docs/web.md). */
const API_PATHS = /^\/(v1\/|users$|oauth2\/(token|device_authorization|revoke|introspect|par|register|register\/:client_id)$|\.well-known\/|healthz$|readyz$)/;

/** The one inline style @fastify/swagger-ui 6.1.3 applies (the browser test of /docs names it when it changes). */
const SWAGGER_UI_STYLE = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='";

/** Before the routes are registered: the document is collected as they are. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  app.addSchema(ERROR_SCHEMA);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Stride',
        version: '1',
        description:
          'Activity data protected by OAuth 2.0: the resource API (profile, steps, sleep, body weight), the event feed and webhooks, and the authorization server\'s endpoints for clients. Guides: docs/api.md, docs/oauth.md, docs/webhooks.md.',
      },
      servers: [{ url: app.ctx.config.publicUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'An access token from /oauth2/token (RFC 6750)' },
          dpop: {
            type: 'http',
            scheme: 'dpop',
            description: 'A DPoP-bound access token (RFC 9449 §7): Authorization: DPoP <token>, with a DPoP header holding a new proof of the bound key that carries ath',
          },
          clientBasic: { type: 'http', scheme: 'basic', description: 'client_id and client_secret (RFC 6749 §2.3.1); the form fields of the body work as well' },
        },
      },
    },
    // Shared schemas keep their names (`#/components/schemas/Error`).
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    transform: ({ schema, url }) => ({ schema: API_PATHS.test(url) ? schema : { ...schema, hide: true }, url }),
  });
  // The pages' headers but one: Swagger UI applies one inline style, allowed by its hash (a CSP
  // Level 3 hash-source) rather than 'unsafe-inline', on /docs only. No validator badge: it would
  // load an image from swagger.io.
  await app.register(async (docs) => {
    const headers = docs.securityHeaders;
    docs.decorate('securityHeaders', { ...headers, 'content-security-policy': `${headers['content-security-policy']};style-src 'self' ${SWAGGER_UI_STYLE}` });
    await docs.register(swaggerUi, { routePrefix: '/docs', uiConfig: { validatorUrl: null } });
  });
}

/** `GET /openapi.json`; app.ts puts it where tools on other origins (an editor, a client generator) may read it. */
export async function openApiDocumentRoute(scope: FastifyInstance): Promise<void> {
  scope.get('/openapi.json', { schema: { hide: true } }, async () => scope.swagger());
}
