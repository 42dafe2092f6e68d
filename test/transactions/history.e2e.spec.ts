import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { dataSource, TestTenant } from '../support/test-app';
import { fund, http, moneyBody, moneyTestBed, post, reverse, transfer, transferBody, WalletSet } from '../support/money-fixtures';

interface Rec {
  transaction_id: string;
  account: string;
  transaction_source: string;
  previous_balance: string;
  current_balance: string;
}

/** GET /api/v1/accounts/account-number/{n}/transactions and GET /api/v1/transactions/{id}. */
describe('transaction history', () => {
  let app: NestFastifyApplication;
  let tenant: TestTenant;
  let other: TestTenant;
  let wallets: WalletSet;
  let noFee: string;
  let account: string;
  let peer: string;
  /** Every record of `account`, in the order they were answered. */
  const written: Rec[] = [];

  const history = (n: string, query = '', t: TestTenant = tenant) =>
    http(app).get(`/api/v1/accounts/account-number/${n}/transactions${query}`).set('authorization', t.auth);

  async function dbNow(): Promise<string> {
    await new Promise((r) => setTimeout(r, 30));
    const [row] = await dataSource(app).query('SELECT clock_timestamp() AS now');
    const now = new Date(row.now).toISOString();
    await new Promise((r) => setTimeout(r, 30));
    return now;
  }

  beforeAll(async () => {
    ({ app, tenant, other, wallets, noFee } = await moneyTestBed());
    account = await wallets.create();
    peer = await wallets.create();
    await fund(app, tenant, peer, 1000);
    for (let i = 1; i <= 12; i++) {
      const res = await post(app, tenant, 'CREDIT', moneyBody(tenant, account, noFee, i)).expect(201);
      written.push(res.body);
    }
    for (let i = 1; i <= 5; i++) {
      const res = await post(app, tenant, 'DEBIT', moneyBody(tenant, account, noFee, i)).expect(201);
      written.push(res.body);
    }
    const t1 = await transfer(app, tenant, transferBody(tenant, peer, account, noFee, 100)).expect(201);
    written.push(t1.body.destination_transaction);
    const t2 = await transfer(app, tenant, transferBody(tenant, account, peer, noFee, 50)).expect(201);
    written.push(t2.body.source_transaction);
    const rev = await reverse(app, tenant, written[0].transaction_id).expect(201);
    written.push(rev.body.source_transaction);
    // Records of another wallet must not show up.
    await post(app, tenant, 'CREDIT', moneyBody(tenant, peer, noFee, 5)).expect(201);
  });
  afterAll(async () => app.close());

  it('lists every record of the wallet in booking order, each equal to the record first answered', async () => {
    const res = await history(account, '?limit=100').expect(200);
    expect(res.body.records).toEqual(written);
    expect(res.body.next_cursor).toBeNull();
    // The balances chain: each record starts where the previous one ended.
    for (let i = 1; i < res.body.records.length; i++) {
      expect(res.body.records[i].previous_balance).toBe(res.body.records[i - 1].current_balance);
    }
  });

  it.each([1, 3, 5, 7, 20])('keyset pagination with limit %i walks every record exactly once, in order', async (limit) => {
    const seen: Rec[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await history(account, query).expect(200);
      expect(res.body.records.length).toBeLessThanOrEqual(limit);
      seen.push(...res.body.records);
      cursor = res.body.next_cursor;
      pages++;
      expect(pages).toBeLessThanOrEqual(written.length + 1);
    } while (cursor);
    expect(seen.map((r) => r.transaction_id)).toEqual(written.map((r) => r.transaction_id));
    expect(pages).toBe(Math.max(1, Math.ceil(written.length / limit)));
  });

  it('date filters select records booked inside [start_date, end_date]', async () => {
    const dated = await wallets.create();
    const early = [];
    for (let i = 0; i < 3; i++)
      early.push((await post(app, tenant, 'CREDIT', moneyBody(tenant, dated, noFee, 10)).expect(201)).body.transaction_id);
    const middle = await dbNow();
    const late = [];
    for (let i = 0; i < 4; i++)
      late.push((await post(app, tenant, 'CREDIT', moneyBody(tenant, dated, noFee, 10)).expect(201)).body.transaction_id);
    const end = await dbNow();
    await post(app, tenant, 'CREDIT', moneyBody(tenant, dated, noFee, 10)).expect(201);

    const ids = (res: { body: { records: Rec[] } }) => res.body.records.map((r) => r.transaction_id);
    expect(ids(await history(dated, `?end_date=${middle}`).expect(200))).toEqual(early);
    expect(ids(await history(dated, `?start_date=${middle}&end_date=${end}`).expect(200))).toEqual(late);
    expect(
      await history(dated, `?start_date=${end}`)
        .expect(200)
        .then((r) => r.body.records.length),
    ).toBe(1);
    // Paging inside a date window stays inside it.
    const page1 = await history(dated, `?start_date=${middle}&end_date=${end}&limit=3`).expect(200);
    const page2 = await history(
      dated,
      `?start_date=${middle}&end_date=${end}&limit=3&cursor=${encodeURIComponent(page1.body.next_cursor)}`,
    ).expect(200);
    expect([...ids(page1), ...ids(page2)]).toEqual(late);
    expect(page2.body.next_cursor).toBeNull();
  });

  it('bare dates name whole UTC days, as on statements: a bare end_date includes that day', async () => {
    const [row] = await dataSource(app).query(
      `SELECT min(t.created_at) AS first, max(t.created_at) AS last
       FROM wallet_transactions t JOIN ledger_accounts a ON a.client_id = t.client_id AND a.id = t.account_id
       WHERE a.client_id = $2 AND a.account_number = $1`,
      [account, tenant.clientId],
    );
    const [firstDay, lastDay] = [row.first, row.last].map((at: Date) => at.toISOString().slice(0, 10));
    const res = await history(account, `?start_date=${firstDay}&end_date=${lastDay}&limit=100`).expect(200);
    expect(res.body.records).toEqual(written);
    const dayAfter = new Date(Date.parse(`${lastDay}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    expect((await history(account, `?start_date=${dayAfter}`).expect(200)).body.records).toEqual([]);
  });

  it('end_date before start_date → 400', async () => {
    const res = await history(account, '?start_date=2024-02-01T00:00:00.000Z&end_date=2024-01-01T00:00:00.000Z').expect(400);
    expect(res.body).toEqual({ status: 400, message: expect.anything(), code: 'HttpException' });
  });

  it('invalid dates, limits and cursors → 400', async () => {
    await history(account, '?start_date=yesterday').expect(400);
    await history(account, '?start_date=1').expect(400); // Date would read 2001-01-01
    await history(account, '?end_date=2025-02-30').expect(400); // Date would roll over to March 2
    await history(account, '?limit=0').expect(400);
    await history(account, '?limit=abc').expect(400);
    await history(account, '?limit=100000').expect(400);
    await history(account, '?cursor=garbage').expect(400);
  });

  it("another client's wallet and an unknown wallet → 404; no token → 401", async () => {
    const foreign = await history(account, '', other).expect(404);
    const unknown = await history('19999999999').expect(404);
    expect(foreign.body).toEqual(unknown.body);
    await http(app).get(`/api/v1/accounts/account-number/${account}/transactions`).expect(401);
  });

  it('GET /transactions/{id} answers the record of the caller, 404 for others and unknown ids', async () => {
    for (const rec of [written[0], written[13], written[written.length - 1]]) {
      const res = await http(app).get(`/api/v1/transactions/${rec.transaction_id}`).set('authorization', tenant.auth).expect(200);
      expect(res.body).toEqual(rec);
    }
    await http(app).get(`/api/v1/transactions/${written[0].transaction_id}`).set('authorization', other.auth).expect(404);
    await http(app).get('/api/v1/transactions/00000000-0000-4000-8000-000000000000').set('authorization', tenant.auth).expect(404);
    await http(app).get('/api/v1/transactions/nope').set('authorization', tenant.auth).expect(404);
  });
});
