/** Every browser flow (browser-flows.ts) on a fresh PostgreSQL schema, when TEST_DATABASE_URL is set. */
import { browserFlowsOn } from './browser-flows.js';

browserFlowsOn('postgres');
