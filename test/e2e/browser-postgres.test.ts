/** The smoke flow of browser-flows.ts (connecting an app and revoking it) on a fresh PostgreSQL schema. */
import { browserFlowsOn } from './browser-flows.js';

browserFlowsOn('postgres');
