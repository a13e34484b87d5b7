/**
 * The credential comparison's time (security/secrets.ts `constantTimeEqual`, used by /metrics, client
 * secrets, PKCE and CSRF): a token of another length must take as long to refuse as one of the
 * right length, or the time would tell how long the secret is. Measured in rounds, the two cases
 * one after the other in each round, and the rounds' median ratio compared, so that a load which
 * slows one round slows both of its cases. Exits 1 when the ratio is outside 0.8–1.25 (returning
 * early on a length mismatch spends about half the time: the bytes are never compared).
 *
 *   npm run build && node dist/bench/constant-time.js
 */
import { constantTimeEqual } from '../src/security/secrets.js';

const token = 't'.repeat(1000);
const sameLength = 'x'.repeat(1000);
const longer = 'x'.repeat(1001); // the same count of SHA-256 blocks as the token: hashing costs the same

function timeOf(sent: string, calls: number): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) constantTimeEqual(sent, token);
  return Number(process.hrtime.bigint() - start);
}

timeOf(sameLength, 2000);
timeOf(longer, 2000);
const ratios: number[] = [];
for (let round = 0; round < 101; round++) ratios.push(timeOf(longer, 400) / timeOf(sameLength, 400));
const median = ratios.sort((a, b) => a - b)[50]!;
const within = median > 0.8 && median < 1.25;
process.stdout.write(`a token of another length takes ${median.toFixed(3)}× as long to refuse as one of the right length (0.8–1.25: ${within ? 'met' : 'MISSED'})\n`);
if (!within) process.exitCode = 1;
