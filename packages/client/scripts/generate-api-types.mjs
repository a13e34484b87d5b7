/**
 * Writes src/generated/api.ts, the types of Stride's API, from the OpenAPI document the server
 * itself serves at /openapi.json. The Fastify application is built in process on an empty SQLite
 * database in memory — no server to run, no network — and asked for its document, which
 * openapi-typescript turns into types. The root `npm run build` runs this before `tsc -b`, so the
 * types follow whatever the routes' schemas say (docs/decisions/0025-typed-client.md).
 *
 * The server's sources are transpiled by esbuild (types stripped, nothing checked: `tsc -b` checks
 * them right after) into .build-openapi/, one folder below the repository like dist/, because the
 * server finds its templates and assets relative to its own modules. This takes about a second
 * where compiling the server with tsc first would take half a minute. Nothing is done when the
 * file is newer than every source of the server and this script (delete src/generated/ to make it
 * anyway, after an upgrade of openapi-typescript say); and the file is rewritten only
 * when its text changes, so an unchanged API leaves `tsc -b` nothing to do for the client.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SERVER_BUILD = join(ROOT, '.build-openapi');
const OUTPUT = fileURLToPath(new URL('../src/generated/api.ts', import.meta.url));

const HEADER = `/**
 * Generated from Stride's /openapi.json by scripts/generate-api-types.mjs (openapi-typescript) at
 * build time; not kept in git. Change the routes' schemas in the server, never this file.
 */
`;

function typeScriptFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return typeScriptFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The document /openapi.json serves, from an application built in process. */
async function openApiDocument() {
  const { build } = await import('esbuild');
  rmSync(SERVER_BUILD, { recursive: true, force: true });
  await build({
    entryPoints: typeScriptFiles(join(ROOT, 'src')),
    outdir: SERVER_BUILD,
    outbase: ROOT,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'error',
  });
  try {
    const load = (module) => import(pathToFileURL(join(SERVER_BUILD, 'src', module)).href);
    const [{ buildApp }, { systemClock }, { loadConfig }, { openDatabase }, { migrateToLatest }, { createStores }] = await Promise.all(
      ['app.js', 'clock.js', 'config.js', 'db/database.js', 'db/migrate.js', 'store/stores.js'].map(load),
    );
    const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent', PUBLIC_URL: 'http://localhost:3000' });
    const db = openDatabase(config.databaseUrl);
    try {
      await migrateToLatest(db);
      const app = await buildApp({ config, stores: createStores(db), clock: systemClock });
      await app.ready();
      const document = JSON.parse(JSON.stringify(app.swagger()));
      await app.close();
      return document;
    } finally {
      await db.close();
    }
  } finally {
    rmSync(SERVER_BUILD, { recursive: true, force: true });
  }
}

/** Whether the types were made after the last change of the server's sources and of this script. */
function upToDate() {
  let made;
  try {
    made = statSync(OUTPUT).mtimeMs;
  } catch {
    return false;
  }
  const sources = [fileURLToPath(import.meta.url), ...typeScriptFiles(join(ROOT, 'src'))];
  return sources.every((source) => statSync(source).mtimeMs < made);
}

if (upToDate()) process.exit(0);

// Loaded only when the types are made: they cost more than the check above.
const { default: openapiTS, astToString } = await import('openapi-typescript');

const text = HEADER + astToString(await openapiTS(await openApiDocument(), { alphabetize: true }));
let previous = null;
try {
  previous = readFileSync(OUTPUT, 'utf8');
} catch {
  // the first build
}
mkdirSync(dirname(OUTPUT), { recursive: true });
if (previous !== text) writeFileSync(OUTPUT, text);
else utimesSync(OUTPUT, new Date(), new Date()); // checked against these sources: no need to look again

