import { JwtService } from '@nestjs/jwt';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { ApiKeysService } from '../../src/auth/gateway/api-keys.service';
import { chargeBody, createGatewayMerchant, GatewayMerchant } from '../support/gateway-fixtures';
import { createTestApp, dataSource } from '../support/test-app';

const UNAUTHORIZED = { statusCode: 401, message: 'Invalid Authentication Credentials', error: 'Unauthorized' };

/** Gateway token authentication (collection document §5, provider contract §2 and §5). */
describe('gateway authentication: POST /v1/auth and the gateway token', () => {
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    app = await createTestApp();
    merchant = await createGatewayMerchant(app);
  });
  afterAll(async () => app.close());

  describe('POST /v1/auth', () => {
    it('answers 200 with an access token valid for 3600 s under both spellings of the lifetime', async () => {
      const res = await http().post('/v1/auth').send({ consumer_key: merchant.consumerKey, consumer_secret: merchant.consumerSecret });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ access_token: expect.any(String), expiresIn: 3600, expires_in: 3600 });
      const claims = app.get(JwtService).decode(res.body.access_token) as { iat: number; exp: number };
      expect(claims.exp - claims.iat).toBe(3600);
      // The token works at once.
      await http().get('/v1/transaction/1/status').set('x-access-token', res.body.access_token).expect(404);
    });

    it('stores the consumer secret hashed, never in clear', async () => {
      const [row] = await dataSource(app).query(`SELECT secret_hash FROM api_keys WHERE consumer_key = $1`, [merchant.consumerKey]);
      expect(row.secret_hash).not.toContain(merchant.consumerSecret);
      expect(row.secret_hash).toMatch(/^\$argon2/);
    });

    it.each<[string, () => unknown]>([
      ['a wrong secret', () => ({ consumer_key: merchant.consumerKey, consumer_secret: `${merchant.consumerSecret}x` })],
      ['an unknown key', () => ({ consumer_key: 'ck_00000000000000000000000000000000', consumer_secret: merchant.consumerSecret })],
      [
        'another key with this key’s secret',
        () => ({
          consumer_key: merchant.consumerKey.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a')),
          consumer_secret: merchant.consumerSecret,
        }),
      ],
      ['a missing secret', () => ({ consumer_key: merchant.consumerKey })],
      ['a missing key', () => ({ consumer_secret: merchant.consumerSecret })],
      ['an empty body object', () => ({})],
      ['empty strings', () => ({ consumer_key: '', consumer_secret: '' })],
      ['numbers instead of strings', () => ({ consumer_key: 12345, consumer_secret: 67890 })],
      ['an array body', () => [merchant.consumerKey, merchant.consumerSecret]],
      ['an over-long key', () => ({ consumer_key: 'k'.repeat(5000), consumer_secret: merchant.consumerSecret })],
    ])('%s → 401 with the documented body', async (_name, body) => {
      const res = await http()
        .post('/v1/auth')
        .send(body() as object);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });

    it('no body at all → 401 with the documented body', async () => {
      const res = await http().post('/v1/auth');
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });

    it('each key acts for its own client: a second key of another merchant gives a token for that merchant', async () => {
      const other = await createGatewayMerchant(app);
      const keys = await app.get(ApiKeysService).issue(other.clientId);
      const res = await http().post('/v1/auth').send(keys).expect(200);
      const claims = app.get(JwtService).decode(res.body.access_token) as { cid: string; ccode: string };
      expect(claims).toMatchObject({ cid: other.clientId, ccode: other.clientCode });
    });
  });

  describe('the token on gateway routes', () => {
    const probe = () => http().get('/v1/transaction/999999999/status');

    it('is accepted from x-access-token', async () => {
      const res = await probe().set('x-access-token', merchant.token);
      // Authenticated: the lookup runs and the unknown id is a 404, not a 401.
      expect(res.status).toBe(404);
      expect(res.body.status_code).toBe(120);
    });

    it('is accepted from Authorization: Bearer', async () => {
      const res = await probe().set('authorization', `Bearer ${merchant.token}`);
      expect(res.status).toBe(404);
      expect(res.body.status_code).toBe(120);
    });

    it('is accepted on POST routes as well, and a successful gateway POST answers HTTP 200 (not 201)', async () => {
      const viaHeader = await http().post('/v1/mobile-money/charge').set('x-access-token', merchant.token).send(chargeBody(merchant));
      expect(viaHeader.status).toBe(200);
      expect(viaHeader.body.status_code).toBe(176);
      const viaBearer = await http()
        .post('/v1/mobile-money/charge')
        .set('authorization', `Bearer ${merchant.token}`)
        .send(chargeBody(merchant));
      expect(viaBearer.status).toBe(200);
      expect(viaBearer.body.status_code).toBe(176);

      const otpCharge = chargeBody(merchant, { payer_msisdn: '254700000004' });
      await http().post('/v1/mobile-money/charge').set('x-access-token', merchant.token).send(otpCharge).expect(200);
      const otp = await http()
        .post('/v1/mobile-money/verify-otp')
        .set('x-access-token', merchant.token)
        .send({ reference: otpCharge.external_reference, otp: '000000' });
      expect(otp.status).toBe(200);
      expect(otp.body.status).toBe('OTP_INVALID');
    });

    it.each<[string, (r: request.Test) => request.Test]>([
      ['no token', (r) => r],
      ['an empty x-access-token', (r) => r.set('x-access-token', '')],
      ['a garbage x-access-token', (r) => r.set('x-access-token', 'not-a-jwt')],
      ['a garbage bearer token', (r) => r.set('authorization', 'Bearer abc.def.ghi')],
      ['a token with a flipped signature', (r) => r.set('x-access-token', flipLast(merchant.token))],
      ['Basic credentials instead of a token', (r) => r.set('authorization', `Basic ${Buffer.from('a:b').toString('base64')}`)],
    ])('%s → 401 on a GET and on a POST, and no charge is written', async (_name, withAuth) => {
      const before = await paymentCount();
      for (const res of [
        await withAuth(probe()),
        await withAuth(http().post('/v1/mobile-money/charge')).send(chargeBody(merchant)),
        await withAuth(http().get('/v1/callbacks?reference=x')),
      ]) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual(UNAUTHORIZED);
      }
      expect(await paymentCount()).toBe(before);
    });

    it('an expired token → 401', async () => {
      const now = Math.floor(Date.now() / 1000);
      // The merchant's live key: only the expiry differs between the two tokens.
      const { sub } = app.get(JwtService).decode(merchant.token) as { sub: string };
      const expired = await app
        .get(JwtService)
        .signAsync({ sub, cid: merchant.clientId, ccode: merchant.clientCode, iat: now - 3700, exp: now - 100 }, { audience: 'gateway' });
      const res = await probe().set('x-access-token', expired);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
      // The same claims, not yet expired, pass: it is the expiry that is refused.
      const fresh = await app
        .get(JwtService)
        .signAsync({ sub, cid: merchant.clientId, ccode: merchant.clientCode, iat: now, exp: now + 100 }, { audience: 'gateway' });
      expect((await probe().set('x-access-token', fresh)).status).toBe(404);
    });

    it('a token signed with another secret → 401', async () => {
      const forged = await app
        .get(JwtService)
        .signAsync(
          { sub: 'k', cid: merchant.clientId, ccode: merchant.clientCode },
          { audience: 'gateway', secret: 'another-secret-another-secret-another-secret', expiresIn: 600 },
        );
      const res = await probe().set('x-access-token', forged);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });

    it('an unsigned token (alg none) → 401', async () => {
      const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
      const now = Math.floor(Date.now() / 1000);
      const unsigned = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'k', cid: merchant.clientId, ccode: merchant.clientCode, aud: 'gateway', iat: now, exp: now + 600 })}.`;
      const res = await probe().set('x-access-token', unsigned);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });
  });

  describe('gateway and wallet tokens are not interchangeable', () => {
    it('a wallet-service token is refused on the gateway, in either header', async () => {
      for (const res of [
        await http().get('/v1/transaction/1/status').set('x-access-token', merchant.tenant.token),
        await http().get('/v1/transaction/1/status').set('authorization', merchant.tenant.auth),
        await http().post('/v1/mobile-money/charge').set('authorization', merchant.tenant.auth).send(chargeBody(merchant)),
      ]) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual(UNAUTHORIZED);
      }
      // The wallet token itself is fine on the wallet API.
      await http().get('/api/v1/account-types').set('authorization', merchant.tenant.auth).expect(200);
    });

    it('a gateway token is refused on the wallet API', async () => {
      const res = await http().get('/api/v1/account-types').set('authorization', `Bearer ${merchant.token}`);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ status: 401, code: 'HttpException' });
      const write = await http()
        .post('/api/v1/account-types')
        .set('authorization', `Bearer ${merchant.token}`)
        .send({ client_code: merchant.clientCode, account_type_name: 'Sneaky' });
      expect(write.status).toBe(401);
    });
  });

  async function paymentCount(): Promise<number> {
    const [row] = await dataSource(app).query(`SELECT count(*)::int AS n FROM payments WHERE client_id = $1`, [merchant.clientId]);
    return row.n;
  }
});

/** Changes one character in the middle of the signature (the last one may only carry padding bits). */
function flipLast(token: string): string {
  const i = token.lastIndexOf('.') + 10;
  return token.slice(0, i) + (token[i] === 'A' ? 'B' : 'A') + token.slice(i + 1);
}
