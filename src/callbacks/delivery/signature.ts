import { createHmac } from 'node:crypto';

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
