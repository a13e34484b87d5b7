/**
 * Resource API bodies are JSON only. The app also parses form and text bodies (for the OAuth
 * endpoints), so this check answers those with 415 on the resource routes (docs/api.md).
 */
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';

export async function requireJsonBody(request: FastifyRequest): Promise<void> {
  const contentType = request.headers['content-type'];
  if (contentType === undefined) return;
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    throw new ApiError('unsupported_media_type', `the body must be application/json, not ${mediaType.slice(0, 80) || 'empty'}`);
  }
}
