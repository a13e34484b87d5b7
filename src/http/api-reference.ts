/**
 * `/docs`: the API reference people read and try requests from — Scalar's renderer
 * (@scalar/fastify-api-reference) reading /openapi.json, everything served by Stride itself
 * (docs/decisions/0026-api-reference.md) — and `/docs/guides/…`, the guides it links to.
 *
 * The plugin serves its bundle at /docs/js/scalar.js; the page itself is Stride's own, because the
 * plugin's page starts the renderer with an inline script. Stride's page loads both scripts from
 * itself: scripts stay 'self' only, no inline script, no eval. Styles are what the renderer needs
 * beyond the pages' CSP (RENDERER_STYLES).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import scalar from '@scalar/fastify-api-reference';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { notFound } from '../errors.js';

export const REFERENCE_PATH = '/docs';

/**
 * What the renderer adds to the pages' CSP, for styles only (CSP Level 3 directives):
 * - its stylesheet, a <style> it adds at run time with the nonce it reads from
 *   `<meta property="csp-nonce">`, made anew for each answer;
 * - two <style> elements it adds without a nonce, its toasts' and its base theme's, allowed by
 *   their hashes (those of @scalar/fastify-api-reference 1.76.3: the browser test of /docs fails,
 *   naming the element, when an upgrade changes them);
 * - style attributes (Vue's style bindings, a scrollbar measurement): an attribute's CSS cannot
 *   select or load anything under this policy.
 */
const RENDERER_STYLE_HASHES = ["'sha256-l/2OpPg0d+2VLTLgwjf5mQo2CYwHDEqdj5TjbfEyVJI='", "'sha256-T13Uev3xCax2N28XaoAE8DOzQZKvPp7ZQVAi1iRREjo='"];
export const rendererStyles = (nonce: string) => `style-src-elem 'self' 'nonce-${nonce}' ${RENDERER_STYLE_HASHES.join(' ')};style-src-attr 'unsafe-inline'`;

/** The guides the reference links to, served as they are in the repository's docs/ folder. */
export const GUIDES = [
  { file: 'oauth.md', title: 'Connecting an app (OAuth 2.0)' },
  { file: 'api.md', title: 'The resource API' },
  { file: 'webhooks.md', title: 'Events and webhooks' },
] as const;
type Guide = (typeof GUIDES)[number];

const DOCS_DIR = fileURLToPath(new URL('../../../docs/', import.meta.url));

export const guideUrl = (publicUrl: string, guide: Guide) => `${publicUrl}${REFERENCE_PATH}/guides/${guide.file}`;

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** What the renderer is started with (Scalar's configuration); no option that reaches another host. */
function rendererConfiguration(publicUrl: string) {
  return {
    url: '/openapi.json',
    // Its fonts would come from fonts.scalar.com: the system's fonts instead.
    withDefaultFonts: false,
    telemetry: false,
    // The "Open API client" button and the developer tools lead to scalar.com's services.
    hideClientButton: true,
    showDeveloperTools: 'never',
    agent: { disabled: true },
    mcp: { disabled: true },
    documentDownloadType: 'json',
    metaData: { title: 'Stride API reference' },
    authentication: {
      preferredSecurityScheme: 'oauth',
      securitySchemes: {
        // The flow comes back to this page: the redirect URI a public app registers to try the API here.
        oauth: { flows: { authorizationCode: { 'x-scalar-redirect-uri': `${publicUrl}${REFERENCE_PATH}`, 'x-usePkce': 'SHA-256' } } },
      },
    },
  };
}

function page(nonce: string, configuration: object): string {
  // JSON in a data block is not run: only the two scripts below are, both from this server.
  const json = JSON.stringify(configuration).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta property="csp-nonce" content="${escapeHtml(nonce)}">
<title>Stride API reference</title>
</head>
<body>
<div id="reference"></div>
<script id="reference-configuration" type="application/json">${json}</script>
<script src="${REFERENCE_PATH}/js/scalar.js"></script>
<script src="${REFERENCE_PATH}/reference.js"></script>
</body>
</html>
`;
}

/** Starts the renderer with the page's configuration. */
const STARTER = `Scalar.createApiReference('#reference', JSON.parse(document.getElementById('reference-configuration').textContent));\n`;

/** The bundle (~5 MB) compressed once, on first request, for every browser that accepts gzip. */
function gzipOnce(): (payload: string) => Promise<Buffer> {
  let compressed: { source: string; body: Promise<Buffer> } | undefined;
  return (payload) => {
    if (compressed?.source !== payload) compressed = { source: payload, body: promisify(gzip)(payload, { level: 9 }) };
    return compressed.body;
  };
}

export async function registerApiReference(app: FastifyInstance): Promise<void> {
  const configuration = rendererConfiguration(app.ctx.config.publicUrl);
  const pageCsp = app.securityHeaders['content-security-policy'];
  const showPage: RouteHandlerMethod = async (_request, reply) => {
    const nonce = randomBytes(16).toString('base64');
    return reply
      .header('content-security-policy', `${pageCsp};${rendererStyles(nonce)}`)
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(page(nonce, configuration));
  };
  const compress = gzipOnce();
  const sendCompressed = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (typeof payload !== 'string' || !/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) return payload;
    reply.header('content-encoding', 'gzip').header('vary', 'accept-encoding').removeHeader('content-length');
    return compress(payload);
  };

  await app.register(async (docs) => {
    // The plugin's page is replaced by Stride's (above); its bundle is sent compressed.
    docs.addHook('onRoute', (route) => {
      if (route.url === `${REFERENCE_PATH}/`) route.handler = showPage;
      if (route.url === `${REFERENCE_PATH}/js/scalar.js`) route.onSend = sendCompressed;
    });
    await docs.register(scalar, { routePrefix: REFERENCE_PATH, configuration: { url: '/openapi.json' } });
  });
  app.get(`${REFERENCE_PATH}/reference.js`, { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').send(STARTER),
  );
  app.get<{ Params: { file: string } }>(`${REFERENCE_PATH}/guides/:file`, { schema: { hide: true } }, async (request, reply) => {
    const guide = GUIDES.find((candidate) => candidate.file === request.params.file);
    if (!guide) throw notFound(`no guide ${request.params.file}`);
    // Markdown as text: every browser shows it, and links between the guides stay relative.
    return reply.type('text/plain; charset=utf-8').send(await readFile(`${DOCS_DIR}${guide.file}`, 'utf8'));
  });
}
