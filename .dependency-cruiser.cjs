/**
 * The layers of src/ and the one rule between them: a module imports only its own layer and the
 * layers listed as beneath it, and nothing in src/ imports in a circle. Checked by
 * test/architecture.test.ts in `npm test` (type-only imports count too).
 *
 * A new folder or top-level module of src/ gets a row here, or the check refuses it.
 */

/** Bottom first. `uses`: the layers a module of this one may import, besides its own. */
const LAYERS = [
  // Plain values and helpers that know nothing of HTTP or the database; among them the rules
  // of the domain and of OAuth that need nothing else and that layers below theirs apply too.
  {
    name: 'foundation',
    path: '^src/(config|errors|clock|metrics|metric-series|speed-switches)\\.ts$|^src/(security|calendar)/|^src/domain/(resting-heart-rate|future-times|sleep-overlap)\\.ts$|^src/oauth/grant-types\\.ts$',
    uses: [],
  },
  { name: 'db', path: '^src/db/', uses: ['foundation'] },
  // SQL and transactions live here and in db/ only; the layers above see narrow stores.
  { name: 'store', path: '^src/store/', uses: ['foundation', 'db'] },
  // What every handler is given (config, stores, clock, metrics).
  { name: 'context', path: '^src/context\\.ts$', uses: ['foundation', 'store'] },
  // Fastify plumbing shared by every face (rate limits, security headers, health, logging):
  // it knows no route of Stride, so the route plugins above can all use it.
  { name: 'http', path: '^src/http/', uses: ['foundation', 'context'] },
  { name: 'domain', path: '^src/domain/', uses: ['foundation', 'context', 'store'] },
  // The protocol: plain functions, and the machine-facing routes (metadata, token, revoke, introspect).
  { name: 'oauth', path: '^src/oauth/', uses: ['foundation', 'context', 'store', 'http', 'domain'] },
  // Events sent out: target checks, signing, the delivery worker.
  { name: 'webhooks', path: '^src/webhooks/', uses: ['foundation', 'context', 'store', 'domain'] },
  { name: 'api', path: '^src/api/', uses: ['foundation', 'context', 'store', 'http', 'domain', 'oauth', 'webhooks'] },
  // The pages, the browser side of the authorization endpoint among them.
  { name: 'web', path: '^src/web/', uses: ['foundation', 'context', 'store', 'http', 'domain', 'oauth', 'webhooks'] },
  // Wiring and entry points.
  {
    name: 'entry',
    path: '^src/(app|server|cli)\\.ts$|^src/cli/|^src/(stride|thread-pool)\\.cts$',
    uses: ['foundation', 'db', 'context', 'store', 'http', 'domain', 'oauth', 'webhooks', 'api', 'web'],
  },
];

const pathOf = (name) => LAYERS.find((layer) => layer.name === name).path;

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle ties its modules together: none of them can be read or changed alone.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    ...LAYERS.map((layer) => ({
      name: `layer-${layer.name}`,
      severity: 'error',
      comment: `${layer.name} imports only ${[layer.name, ...layer.uses].join(', ')} (.dependency-cruiser.cjs)`,
      from: { path: layer.path },
      to: { path: '^src/', pathNot: [layer.path, ...layer.uses.map(pathOf)].join('|') },
    })),
    {
      name: 'database-drivers-in-store',
      severity: 'error',
      comment: 'SQL and transactions are written in store/ and db/ only; the layers above use the stores.',
      from: { path: '^src/', pathNot: '^src/(store|db)/' },
      to: { path: '^node_modules/(kysely|better-sqlite3|pg)/' },
    },
    {
      name: 'layer-unknown',
      severity: 'error',
      comment: 'Every module of src/ belongs to a layer of .dependency-cruiser.cjs.',
      from: { path: '^src/', pathNot: LAYERS.map((layer) => layer.path).join('|') },
      to: {},
    },
  ],
  options: {
    // The database drivers are seen too, for database-drivers-in-store; nothing inside node_modules is followed.
    includeOnly: '^(src/|node_modules/(kysely|better-sqlite3|pg)/)',
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.cts', '.js', '.cjs'] },
  },
};
