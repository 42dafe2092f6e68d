import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * What a merchant runs to check a callback, written from provider contract §6 rather than from our signer:
 * `X-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`, any `v1` may match (a rotation's
 * overlap signs with both secrets), and a timestamp outside the tolerance is refused.
 */
export function verifySignature(secret: string, rawBody: string, header: string, toleranceSeconds = 300, now = Date.now()): boolean {
  const fields = header.split(',').map((field) => {
    const at = field.indexOf('=');
    return { key: field.slice(0, at), value: field.slice(at + 1) };
  });
  const stamp = Number(fields.find((field) => field.key === 't')?.value);
  if (!Number.isInteger(stamp) || Math.abs(now / 1000 - stamp) > toleranceSeconds) return false;
  const expected = createHmac('sha256', secret).update(`${stamp}.${rawBody}`).digest();
  return fields.some(({ key, value }) => {
    if (key !== 'v1' || !/^[0-9a-f]+$/.test(value)) return false;
    const given = Buffer.from(value, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
