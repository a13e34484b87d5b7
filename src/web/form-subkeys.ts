/**
 * Keys of one purpose each, derived (HKDF-SHA256, RFC 5869) from the server's form key in the
 * database, so that every process derives the same ones: the device cookies' signing key, the
 * sealed cookies' encryption keys. A key is derived once per form key and purpose and kept as
 * long as the form key is, instead of again for every cookie made or read.
 */
import { hkdfSync } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

const derived = new WeakMap<Buffer, Map<string, Buffer>>();

/** HKDF-SHA256 of `formKey` with no salt and `purpose` as its info, 32 bytes. */
export function subkey(formKey: Buffer, purpose: string): Buffer {
  let keys = derived.get(formKey);
  if (keys === undefined) {
    keys = new Map();
    derived.set(formKey, keys);
  }
  let key = keys.get(purpose);
  if (key === undefined) {
    key = Buffer.from(hkdfSync('sha256', formKey, Buffer.alloc(0), purpose, 32));
    keys.set(purpose, key);
  }
  return key;
}

/** The key of `purpose` under this server's form key. */
export async function formSubkey(request: FastifyRequest, purpose: string): Promise<Buffer> {
  return subkey(await request.server.serverSecrets.preSessionCsrf(), purpose);
}
