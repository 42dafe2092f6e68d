import { Webhook } from 'standardwebhooks';
import { signatureHeader, signatureHeaders } from '../../../src/callbacks/delivery/signature';

describe('signature headers of a delivery', () => {
  const body = '{"event":"successful_payment","amount":"100.0000"}';
  const id = '5b0e1c7a-2f43-4c1e-9d7a-0c5e3f2b1a90';
  const now = 1_800_000_000;
  const secret = `whsec_${Buffer.alloc(24, 0x5a).toString('base64')}`;
  const older = `whsec_${Buffer.alloc(24, 0x3c).toString('base64')}`;
  const standard = (key: string) => new Webhook(key).sign(id, new Date(now * 1000), body);

  it('X-Signature as the contract fixes it, and Standard Webhooks headers of the same instant and event', () => {
    expect(signatureHeaders([secret], id, body, now)).toEqual({
      'x-signature': signatureHeader(secret, body, now),
      'webhook-id': id,
      'webhook-timestamp': String(now),
      'webhook-signature': standard(secret),
    });
  });

  it('two secrets: one entry each in both headers, newest first', () => {
    const headers = signatureHeaders([secret, older], id, body, now);
    expect(headers['x-signature']).toBe(signatureHeader([secret, older], body, now));
    expect(headers['webhook-signature']).toBe(`${standard(secret)} ${standard(older)}`);
  });

  it('a url-safe secret signs as its standard-alphabet form', () => {
    const bytes = Buffer.alloc(24, 0xfb);
    expect(bytes.toString('base64url')).toBe('-_v7'.repeat(8));
    expect(signatureHeaders([`whsec_${bytes.toString('base64url')}`], id, body, now)['webhook-signature']).toBe(
      standard(`whsec_${bytes.toString('base64')}`),
    );
  });
});
