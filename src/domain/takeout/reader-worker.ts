/**
 * The worker thread of file-reader.ts: parses and reads the files of Takeout archives sent to it,
 * one at a time, with the same pure functions an import would run on the event loop.
 */
import { parentPort } from 'node:worker_threads';
import type { FileRequest } from './file-reader.js';
import { previewFile } from './preview-file.js';
import { readFile } from './read-files.js';

parentPort!.on('message', (request: FileRequest) => {
  try {
    const bytes = Buffer.from(request.bytes.buffer, request.bytes.byteOffset, request.bytes.byteLength);
    const result = request.op === 'preview' ? previewFile(request.kind, bytes) : readFile(request.kind, bytes, request.context);
    parentPort!.postMessage({ id: request.id, result });
  } catch (error) {
    parentPort!.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error) });
  }
});
