/**
 * The machine-readable API: an OpenAPI 3.1 document made from the routes' own schemas
 * (`GET /openapi.json`), finished by openapi-answers.ts, and read by people at `/docs`
 * (api-reference.ts). The pages for people (sign-in, consent, dashboard, account) are not part of
 * it; the authorization endpoint, a page, is described by the caller (`extraPaths`).
 */
import swagger, { type SwaggerOptions } from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { registerApiReference, REFERENCE_PATH, GUIDES, guideUrl } from './api-reference.js';
import { finishDocument, type OpenApiDocument } from './openapi-answers.js';
import { ERROR_SCHEMA, documentedScope } from './schemas.js';

/** The paths a program calls; everything else is a page (docs/web.md). */
const API_PATHS = /^\/(v1\/|1(\.2)?\/user\/|users$|oauth2\/(token|device_authorization|revoke|introspect|par|register|register\/:client_id)$|\.well-known\/|healthz$|readyz$)/;

/** The resource API: its routes take an access token, which the OAuth flow of the document gives. */
const RESOURCE_API = /^\/(v1\/users\/|1(\.2)?\/user\/|users$)/;

/** The profile's path for apps written before /v1 (api/users.ts): the same routes, documented as the alias. */
const ALIASES: Record<string, string> = { '/users': '/v1/users/me' };

export interface OpenApiOptions {
  /** The scopes an app may ask for, each with the words the consent page shows. */
  scopes: Readonly<Record<string, string>>;
  /** Path items of routes that have no schema of their own (the authorization endpoint, a page). */
  extraPaths: Readonly<Record<string, object>>;
}

function documentDescription(publicUrl: string): string {
  const guides = GUIDES.map((guide) => `[${guide.title}](${guideUrl(publicUrl, guide)})`).join(' · ');
  return [
    'Activity data protected by OAuth 2.0: the resource API (profile, steps, distance, calories, heart rate, sleep, body weight, daily summary), the event feed and webhooks, and the authorization server\'s endpoints for clients.',
    '',
    `**Guides:** ${guides}.`,
    '',
    '**Trying it from this page.** Every call of the resource API takes an access token. Either paste one under *Bearer*, or let the page get one with OAuth 2.0 (authorization code with PKCE, S256):',
    '',
    `1. In the dashboard (${publicUrl}/dashboard) register a **public** app whose redirect URIs include \`${publicUrl}${REFERENCE_PATH}\`.`,
    '2. Here, under *Authentication*, choose *oauth*, paste that app\'s client ID (no secret), tick scopes it is registered for and press *Authorize*.',
    '3. Sign in and approve in the window that opens; the page exchanges the code at the token endpoint and sends the token with each request.',
  ].join('\n');
}

/** Before the routes are registered: the document is collected as they are. */
export async function registerOpenApi(app: FastifyInstance, options: OpenApiOptions): Promise<void> {
  const { publicUrl, authUrl } = app.ctx.config;
  app.addSchema(ERROR_SCHEMA);
  const swaggerOptions: SwaggerOptions = {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Stride API', version: '1', description: documentDescription(publicUrl) },
      servers: [{ url: publicUrl }],
      // The order the reference shows them in: connecting first, the data, then the plumbing.
      tags: [
        { name: 'OAuth 2.0', description: 'The authorization server\'s endpoints: authorization, tokens, pushed requests, the device grant, client registration.' },
        ...['Profile', 'Steps', 'Distance', 'Calories', 'Heart rate', 'Sleep', 'Body', 'Daily summary'].map((name) => ({ name })),
        { name: 'Events and webhooks', description: 'What changed in the data of the people who use an app, as a feed and as signed HTTP calls.' },
        { name: 'Fitbit compatible', description: 'The Fitbit Web API\'s paths and shapes on the same data, for apps moving from Fitbit (docs/migrating-from-fitbit.md). Errors in Fitbit\'s shape.' },
        { name: 'Health', description: 'For load balancers and orchestrators.' },
      ],
      components: {
        securitySchemes: {
          oauth: {
            type: 'oauth2',
            description: `An access token obtained by the authorization code grant with PKCE (RFC 6749 §4.1, RFC 7636; S256 only). Public apps send no secret. Guide: ${guideUrl(publicUrl, GUIDES[0]!)}`,
            flows: {
              authorizationCode: {
                authorizationUrl: `${authUrl}/oauth2/authorize`,
                tokenUrl: `${publicUrl}/oauth2/token`,
                refreshUrl: `${publicUrl}/oauth2/token`,
                scopes: { ...options.scopes },
                // Read by the reference at /docs (an extension the OpenAPI types do not know): the flow sends an S256 code challenge.
                ...{ 'x-usePkce': 'SHA-256' },
              },
            },
          },
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
    transform: ({ schema, url, route }) => {
      if (!API_PATHS.test(url)) return { schema: { ...schema, hide: true }, url };
      const scope = RESOURCE_API.test(url) ? (documentedScope(route.onRequest) ?? '') : undefined;
      const alias = ALIASES[url];
      return {
        url,
        schema: {
          ...schema,
          // The scope the route's own hook demands is the one an OAuth token needs here.
          ...(scope !== undefined && schema.security && { security: [{ oauth: scope === '' ? [] : [scope] }, ...schema.security] }),
          ...(alias !== undefined && {
            deprecated: true,
            summary: `${String(schema.summary)}, at the old path (alias of ${alias})`,
            description: `The alias of \`${alias}\` for apps written before /v1: the same answers. New code uses \`${alias}\`.`,
          }),
        },
      };
    },
    transformObject: (documents) => {
      const document = 'openapiObject' in documents ? documents.openapiObject : documents.swaggerObject;
      return finishDocument(document as OpenApiDocument, options.extraPaths) as never;
    },
  };
  await app.register(swagger, swaggerOptions);
  await registerApiReference(app);
}

/** `GET /openapi.json`; app.ts puts it where tools on other origins (an editor, a client generator) may read it. */
export async function openApiDocumentRoute(scope: FastifyInstance): Promise<void> {
  scope.get('/openapi.json', { schema: { hide: true } }, async () => scope.swagger());
}
