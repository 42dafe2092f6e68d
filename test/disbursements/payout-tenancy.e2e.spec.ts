import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { gateway, GatewayMerchant } from '../support/gateway-fixtures';
import {
  b2bBody,
  b2bStatusPath,
  bankPayoutBody,
  createPayoutMerchant,
  expectedFloat,
  expectPayoutAnswer,
  floatBalance,
  imtBody,
  localPayoutBody,
  minus,
  PAYOUT_PATHS,
  plus,
  statusPath,
  storedCounts,
} from '../support/disbursement-fixtures';
import { createTestApp } from '../support/test-app';

/**
 * Tenant isolation on every payout route (provider contract §2, §5): a client acts on its own services, floats and
 * references only. Another client's resource answers exactly as an unknown one (404 / 723, or 721
 * SERVICE_NOT_ALLOWED for a service code) and nothing about it leaks; references are unique per client only.
 */
describe('payout tenancy', () => {
  let app: NestFastifyApplication;
  let owner: GatewayMerchant;
  let intruder: GatewayMerchant;
  const refs = { local: '', imt: '', b2b: '', bank: '' };

  beforeAll(async () => {
    app = await createTestApp();
    owner = await createPayoutMerchant(app, { float: '10000' });
    intruder = await createPayoutMerchant(app, { float: '10000' });
    const bodies = {
      local: localPayoutBody(owner, { sender_amount: '111.1111', recipient_amount: '111.1111' }),
      bank: bankPayoutBody(owner, 'ok'),
      imt: imtBody(owner),
      b2b: b2bBody(owner),
    };
    for (const [key, body] of Object.entries(bodies)) {
      const path = key === 'bank' ? PAYOUT_PATHS.local : PAYOUT_PATHS[key as keyof typeof PAYOUT_PATHS];
      expectPayoutAnswer(await gateway(app, owner.token).post(path).send(body), 720, body.payout_reference as string);
      refs[key as keyof typeof refs] = body.payout_reference as string;
    }
  });
  afterAll(async () => app.close());

  const as = (m: GatewayMerchant) => gateway(app, m.token);

  /** The answer's body with the given reference replaced, so a foreign and an unknown answer can be compared. */
  const masked = (body: unknown, reference: string) => JSON.stringify(body).replaceAll(reference, '<ref>');

  it.each(['local', 'bank', 'imt'] as const)('the %s payout status of another client → 404 / 723, as an unknown reference', async (key) => {
    const reference = refs[key];
    expect((await as(owner).get(statusPath(reference))).status).toBe(200);
    const foreign = await as(intruder).get(statusPath(reference));
    expectPayoutAnswer(foreign, 723);
    const unknownRef = `unknown-${randomUUID()}`;
    const unknown = await as(intruder).get(statusPath(unknownRef));
    expect(masked(foreign.body, reference)).toBe(masked(unknown.body, unknownRef));
    expect(JSON.stringify(foreign.body)).not.toMatch(/111\.1111|Wanjiku|MMONEY|BANK_KEN/);
  });

  it('the B2B status of another client → 404 / 723, as an unknown reference', async () => {
    expect((await as(owner).get(b2bStatusPath(refs.b2b))).status).toBe(200);
    const foreign = await as(intruder).get(b2bStatusPath(refs.b2b));
    expectPayoutAnswer(foreign, 723);
    const unknownRef = `unknown-${randomUUID()}`;
    expect(masked(foreign.body, refs.b2b)).toBe(masked((await as(intruder).get(b2bStatusPath(unknownRef))).body, unknownRef));
    expect(JSON.stringify(foreign.body)).not.toMatch(/Acme|888880/);
  });

  it.each([
    ['local', () => localPayoutBody(owner)],
    ['local BANK', () => bankPayoutBody(owner, 'ok')],
    ['imt', () => imtBody(owner)],
    ['b2b', () => b2bBody(owner)],
  ] as const)('a %s payout on another client’s service_code → 721 SERVICE_NOT_ALLOWED; neither float moves', async (kind, build) => {
    const path = kind === 'local BANK' ? PAYOUT_PATHS.local : PAYOUT_PATHS[kind];
    const before = { owner: await floatBalance(app, owner), intruder: await floatBalance(app, intruder) };
    const counts = { owner: await storedCounts(app, owner.clientId), intruder: await storedCounts(app, intruder.clientId) };
    const body = build();
    const foreign = await as(intruder).post(path).send(body);
    expectPayoutAnswer(foreign, 721, body.payout_reference as string, 'SERVICE_NOT_ALLOWED');
    // Indistinguishable from a service code that does not exist.
    const unknown = await as(intruder)
      .post(path)
      .send({ ...body, service_code: 'NO_SUCH_SERVICE' });
    expectPayoutAnswer(unknown, 721, body.payout_reference as string, 'SERVICE_NOT_ALLOWED');
    expect(foreign.body.response_description.replaceAll(owner.serviceCode, '<s>')).toBe(
      unknown.body.response_description.replaceAll('NO_SUCH_SERVICE', '<s>'),
    );
    expect({ owner: await floatBalance(app, owner), intruder: await floatBalance(app, intruder) }).toEqual(before);
    expect({ owner: await storedCounts(app, owner.clientId), intruder: await storedCounts(app, intruder.clientId) }).toEqual(counts);
  });

  it('another client’s float balance → 404, as an unknown account', async () => {
    const foreign = await as(intruder).get(`/v1/accounts/${owner.settlementAccountNumber}/balance`);
    const unknown = await as(intruder).get('/v1/accounts/19999999999/balance');
    expect([foreign.status, unknown.status]).toEqual([404, 404]);
    expect(masked(foreign.body, owner.settlementAccountNumber)).toBe(masked(unknown.body, '19999999999'));
  });

  it('references are per client: another client may use the same payout_reference, each pays from its own float', async () => {
    const before = { owner: await floatBalance(app, owner), intruder: await floatBalance(app, intruder) };
    for (const [path, body] of [
      [PAYOUT_PATHS.local, localPayoutBody(intruder, { payout_reference: refs.local, sender_amount: '50', recipient_amount: '50' })],
      [PAYOUT_PATHS.b2b, b2bBody(intruder, { payout_reference: refs.b2b, amount: '50' })],
    ] as const) {
      expectPayoutAnswer(await as(intruder).post(path).send(body), 720, body.payout_reference as string);
    }
    expect(await floatBalance(app, owner)).toEqual(before.owner);
    expect(await floatBalance(app, intruder)).toEqual(
      expectedFloat(minus(before.intruder.balance, 120), plus(before.intruder.reserved_balance, 120)),
    );
    // Each now reads its own payout under the shared reference.
    expect((await as(owner).get(statusPath(refs.local)).expect(200)).body.data.amount).toBe('111.1111');
    expect((await as(intruder).get(statusPath(refs.local)).expect(200)).body.data.amount).toBe('50.0000');
  });

  it('another client’s SMS notifications are not readable', async () => {
    const res = await as(intruder).get(`/v1/notifications?reference=${encodeURIComponent(refs.local)}`);
    expect(res.status).toBeLessThan(500);
    if (res.status === 200) {
      const list = Array.isArray(res.body) ? res.body : (res.body.notifications ?? res.body.data ?? []);
      expect(list).toEqual([]);
    } else {
      expect(res.status).toBe(404);
    }
    expect(JSON.stringify(res.body)).not.toContain('254712345678');
  });

  it('every payout route refuses a missing or wallet-service token with 401', async () => {
    const http = () => request(app.getHttpServer());
    const routes: Array<() => request.Test> = [
      () => http().post(PAYOUT_PATHS.local).send(localPayoutBody(owner)),
      () => http().post(PAYOUT_PATHS.imt).send(imtBody(owner)),
      () => http().post(PAYOUT_PATHS.b2b).send(b2bBody(owner)),
      () => http().get(statusPath(refs.local)),
      () => http().get(b2bStatusPath(refs.b2b)),
      () => http().get(`/v1/accounts/${owner.settlementAccountNumber}/balance`),
      () => http().get(`/v1/notifications?reference=${refs.local}`),
    ];
    for (const route of routes) {
      expect((await route()).status).toBe(401);
      expect((await route().set('x-access-token', owner.tenant.token)).status).toBe(401);
      expect((await route().set('authorization', `Bearer ${owner.tenant.token}`)).status).toBe(401);
    }
  });
});
