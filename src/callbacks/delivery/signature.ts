import { createHmac } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

function mac(secret: string, rawBody: string, unixSeconds: number): string {
  return createHmac('sha256', secret).update(`${unixSeconds}.${rawBody}`).digest('hex');
}

/**
 * `X-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>` (provider contract §6). During a
 * signing-secret rotation's overlap one v1 per valid secret, newest first (`t=…,v1=<new>,v1=<old>`), as
 * Stripe-style verifiers accept: a receiver holding either secret finds its match.
 */
export function signatureHeader(secrets: string | readonly string[], rawBody: string, unixSeconds: number): string {
  const all = typeof secrets === 'string' ? [secrets] : secrets;
  return [`t=${unixSeconds}`, ...all.map((secret) => `v1=${mac(secret, rawBody, unixSeconds)}`)].join(',');
}

/**
 * The Standard Webhooks key of a signing secret: the bytes its `whsec_` body encodes (X-Signature keys with the
 * secret's text instead, as Stripe's verifier does). Node reads base64 and base64url alike, so a secret issued in
 * the url-safe alphabet keys the same bytes as its standard-alphabet form (`-` as `+`, `_` as `/`).
 */
function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/**
 * `webhook-signature: v1,<base64 HMAC-SHA256(key, "<id>.<t>.<raw body>")>` (Standard Webhooks), one entry per
 * valid secret, newest first, space-separated.
 */
export function standardWebhookSignature(secrets: readonly string[], eventId: string, rawBody: string, unixSeconds: number): string {
  return secrets
    .map((secret) => `v1,${createHmac('sha256', standardKey(secret)).update(`${eventId}.${unixSeconds}.${rawBody}`).digest('base64')}`)
    .join(' ');
}

/**
 * Every header that signs a delivery, all at the same instant: `X-Signature` (contract §6) and, beside it, Standard
 * Webhooks' `webhook-id` (the event id, as `X-Event-Id`: stable across retries and replays), `webhook-timestamp`
 * and `webhook-signature`, so the receiver's Stripe-style or Standard Webhooks library verifies the same callback.
 */
export function signatureHeaders(
  secrets: readonly string[],
  eventId: string,
  rawBody: string,
  unixSeconds: number,
): Record<string, string> {
  return {
    'x-signature': signatureHeader(secrets, rawBody, unixSeconds),
    'webhook-id': eventId,
    'webhook-timestamp': String(unixSeconds),
    'webhook-signature': standardWebhookSignature(secrets, eventId, rawBody, unixSeconds),
  };
}
