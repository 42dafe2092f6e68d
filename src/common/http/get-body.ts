import { PayloadTooLargeException } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { parseJsonBody } from './body-parsers';

const MAX_GET_BODY_BYTES = 1_048_576;

/**
 * Fastify never parses a body on GET, but the wallet document's list endpoints send `{page, limit}` as a JSON
 * body on a GET. This reads and parses such a body once, so `request.body` holds it as for any other method.
 * Only JSON bodies are read, by the same rules as any other (parseJsonBody); anything else is left alone (and the
 * request acts as if it had no body).
 */
export async function parseJsonBodyOfGet(request: FastifyRequest): Promise<void> {
  if (request.method !== 'GET' || request.body !== undefined) return;
  const contentType = String(request.headers['content-type'] ?? '').toLowerCase();
  const hasBody = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
  if (!hasBody || !/^application\/(.+\+)?json\b/.test(contentType) || request.raw.readableEnded) return;

  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request.raw) {
    size += (chunk as Buffer).length;
    if (size > MAX_GET_BODY_BYTES) throw new PayloadTooLargeException('Request body is too large');
    chunks.push(chunk as Buffer);
  }
  const raw = Buffer.concat(chunks);
  if (raw.toString('latin1').trim() === '') return;
  (request as { body: unknown }).body = parseJsonBody(raw);
}
