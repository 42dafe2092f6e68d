import { createHmac, timingSafeEqual } from 'node:crypto';

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

/** What a merchant runs to check a callback (any v1 may match); used by our tests and quoted in the docs. */
export function verifySignature(secret: string, rawBody: string, header: string, toleranceSeconds = 300, now = Date.now()): boolean {
  const parts = header.split(',').map((p) => p.split('=') as [string, string]);
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t) || Math.abs(now / 1000 - t) > toleranceSeconds) return false;
  const expected = Buffer.from(mac(secret, rawBody, t), 'hex');
  return parts
    .filter(([k, v]) => k === 'v1' && v)
    .some(([, v]) => {
      const given = Buffer.from(v, 'hex');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}
