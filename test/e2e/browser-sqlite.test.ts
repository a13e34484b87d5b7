/** Every browser flow (browser-flows.ts) on a fresh SQLite file. */
import { browserFlowsOn } from './browser-flows.js';

browserFlowsOn('sqlite');
