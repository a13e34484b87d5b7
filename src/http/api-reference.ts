/**
 * `/docs`: the API reference people read and try requests from — Scalar's renderer
 * (@scalar/fastify-api-reference) reading /openapi.json, everything served by Stride itself
 * (docs/decisions/0026-api-reference.md) — and `/docs/guides/…`, the guides it links to.
 *
 * The plugin's bundle is served at /docs/js/scalar.js; the page itself is Stride's own, because the
 * plugin's page starts the renderer with an inline script. Stride's page loads both scripts from
 * itself: scripts stay 'self' only, no inline script, no eval. Styles are what the renderer needs
 * beyond the pages' CSP (RENDERER_STYLES).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
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

/** An HTML page of the reference: `head` goes after the common meta elements, `body` in the body. */
function htmlPage(title: string, head: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
${head}
<title>${title}</title>
</head>
<body>
${body}
</body>
</html>
`;
}

function page(nonce: string, configuration: object): string {
  // JSON in a data block is not run: only the two scripts below are, both from this server.
  const json = JSON.stringify(configuration).replace(/</g, '\\u003c');
  return htmlPage('Stride API reference', `<meta property="csp-nonce" content="${escapeHtml(nonce)}">`, `<div id="reference"></div>
<script id="reference-configuration" type="application/json">${json}</script>
<script src="${REFERENCE_PATH}/js/scalar.js"></script>
<script src="${REFERENCE_PATH}/reference.js"></script>`);
}

/**
 * What /docs shows when it is the redirect URI of the flow run from the page: the window the
 * renderer opened comes back here with the answer in its query (`code`, or `error`), and the
 * renderer that opened it reads that URL and closes the window. The renderer must not start in
 * this window: it rewrites the page's URL as it loads, and on a slow machine it did so before the
 * opener read the code, which then never came (and the window never closed).
 */
function redirectPage(): string {
  return htmlPage('Back to the API reference', '<link rel="stylesheet" href="/assets/stride.css">', `<main>
<h1>Back to the API reference</h1>
<p>This window closes by itself once the reference has read the answer. If it stays open, <a href="${REFERENCE_PATH}">open the reference</a>.</p>
</main>`);
}

/** Starts the renderer with the page's configuration. */
const STARTER = `Scalar.createApiReference('#reference', JSON.parse(document.getElementById('reference-configuration').textContent));\n`;

const BUNDLE_PATH = `${REFERENCE_PATH}/js/scalar.js`;

/**
 * The renderer's bundle (~5 MB of JavaScript), loaded on its first request and kept, with its gzip.
 * The plugin holds the bundle inside its own module: importing it costs a process about 190 ms and
 * 30 MB, so a server nobody asks for /docs never imports it. The plugin is registered in a Fastify
 * instance of its own, asked once for the bundle, and closed.
 */
function bundleOnce(): () => Promise<{ plain: Buffer; gzipped: Buffer }> {
  let loading: Promise<{ plain: Buffer; gzipped: Buffer }> | undefined;
  const load = async () => {
    const { default: scalar } = await import('@scalar/fastify-api-reference');
    const plugin = Fastify();
    try {
      await plugin.register(scalar, { routePrefix: REFERENCE_PATH, configuration: { url: '/openapi.json' } });
      const answer = await plugin.inject(BUNDLE_PATH);
      if (answer.statusCode !== 200) throw new Error(`the API reference plugin answered ${answer.statusCode} for its bundle`);
      const plain = answer.rawPayload;
      return { plain, gzipped: await promisify(gzip)(plain, { level: 9 }) };
    } finally {
      await plugin.close();
    }
  };
  return () => {
    // A failed load is tried again by the next request, not kept.
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
}

export async function registerApiReference(app: FastifyInstance): Promise<void> {
  const configuration = rendererConfiguration(app.ctx.config.publicUrl);
  const pageCsp = app.securityHeaders['content-security-policy'];
  // The app ignores trailing slashes: this is /docs and /docs/.
  app.get<{ Querystring: Record<string, unknown> }>(REFERENCE_PATH, { schema: { hide: true } }, async (request, reply) => {
    // RFC 6749 §4.1.2: the authorization answer, success or error, comes back in the query.
    if ('code' in request.query || 'error' in request.query) {
      return reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(redirectPage());
    }
    const nonce = randomBytes(16).toString('base64');
    return reply
      .header('content-security-policy', `${pageCsp};${rendererStyles(nonce)}`)
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(page(nonce, configuration));
  });
  const bundle = bundleOnce();
  app.get(BUNDLE_PATH, { schema: { hide: true } }, async (request, reply) => {
    const { plain, gzipped } = await bundle();
    reply.type('application/javascript; charset=utf-8').header('vary', 'accept-encoding');
    if (!/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) return reply.send(plain);
    return reply.header('content-encoding', 'gzip').send(gzipped);
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
