/**
 * The physical limit: a bare `node:http` server that answers every request with one JSON body —
 * by default a small one (the size of a Stride profile), or the bytes of a file, so that a large
 * answer of Stride (a day of minute heart rate) is compared with the same bytes sent by Node alone.
 * Usage: node bare-server.js PORT [BODY_FILE] — prints "listening" when ready.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const BODY: string | Buffer = process.argv[3]
  ? readFileSync(process.argv[3])
  : JSON.stringify({
      id: '3f9a6c1e-5b2d-4e8f-9a7c-1d2e3f4a5b6c',
      display_name: 'Bench User',
      timezone: 'UTC',
      daily_step_goal: 10000,
      stride_length_cm: null,
      created_at: 1700000000,
    });
const LENGTH = String(Buffer.byteLength(BODY));

const port = Number(process.argv[2] ?? 0);
const server = createServer((request, response) => {
  // Drain any request body before answering, as a real server would.
  request.resume();
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': LENGTH });
    response.end(BODY);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => process.stdout.write('listening\n'));

const stop = () => server.close(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
