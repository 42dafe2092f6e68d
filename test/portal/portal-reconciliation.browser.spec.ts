import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Decimal from 'decimal.js';
import { Browser, Page } from 'playwright-core';
import type { OperatorMovement, OperatorStatement } from '../../src/rails/operator-statement';
import { ReconciliationService } from '../../src/reconciliation/reconciliation.service';
import {
  chargeBody,
  createGatewayMerchant,
  freePort,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  paymentRow,
  startIsolatedSandbox,
} from '../support/gateway-fixtures';
import { launchChromium, signInPortal } from '../support/portal-browser';
import { dataSource, TestTenant } from '../support/test-app';

/**
 * The merchant portal's reconciliation page in headless Chromium (issue 33, item 4): a merchant sees, read-only, the
 * differences reconciliation found on its own payments, each with its detail; another merchant's difference is never
 * listed and its id is the 404 page.
 */
describe('merchant portal: reconciliation differences', () => {
  jest.setTimeout(180_000);

  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;
  let other: GatewayMerchant;
  let browser: Browser;
  let page: Page;
  let baseUrl: string;
  const problems: string[] = [];

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    // Charges stay pending (the sandbox settles them after 10 minutes) until the run asks about them.
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '600000', PUBLIC_BASE_URL: baseUrl });
    app = sandbox.app;
    await app.listen(port, '127.0.0.1');
    merchant = await createGatewayMerchant(app);
    other = await createGatewayMerchant(app);
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-GB' })).newPage();
    page.on('console', (message) => {
      if (message.text().startsWith('Failed to load resource') && message.location().url === page.url()) return;
      if (message.type() === 'error' || message.type() === 'warning') problems.push(`console ${message.type()}: ${message.text()}`);
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await sandbox?.close();
  });

  const signIn = (tenant: Pick<TestTenant, 'username' | 'password'>) => signInPortal(page, baseUrl, tenant);

  async function charge(of: GatewayMerchant, amount: string) {
    const body = chargeBody(of, { amount });
    expect((await gateway(app, of.token).post('/v1/mobile-money/charge').send(body)).status).toBe(200);
    return (await paymentRow(app, of.clientId, body.external_reference as string))!;
  }

  it("lists the merchant's own differences read-only, opens one, and answers another merchant's id with the 404 page", async () => {
    const ours = await charge(merchant, '120');
    const theirs = await charge(other, '130');
    // The operator lists our merchant's charge a shilling higher, and not the other merchant's at all.
    const row: OperatorMovement = {
      operatorReference: 'QPORTAL001',
      ourReference: String(ours.id),
      counterparty: ours.payer_msisdn,
      amount: new Decimal(ours.total_amount).plus(1),
      currency: 'KES',
      direction: 'IN',
      status: 'SUCCEEDED',
      at: new Date(ours.created_at),
      evidence: {},
    };
    const statement: OperatorStatement = {
      rail: 'mpesa',
      movements: async () => [row],
      balance: async () => ({ amount: new Decimal('0'), currency: 'KES', at: new Date(), evidence: {} }),
    };
    const period = { from: new Date(Date.now() - 3_600_000), to: new Date(Date.now() + 3_600_000) };
    await app.get(ReconciliationService).run('mpesa', period, 'test', statement);
    const stored: { id: string; client_id: string; outcome: string }[] = await dataSource(app).query(
      `SELECT id::text AS id, client_id::text AS client_id, outcome FROM reconciliation_rows WHERE state = 'OPEN' ORDER BY id`,
    );
    const mine = stored.find((r) => r.client_id === merchant.clientId)!;
    const foreign = stored.find((r) => r.client_id === other.clientId)!;
    expect([mine.outcome, foreign.outcome]).toEqual(['AMOUNT_MISMATCH', 'MISSING_AT_OPERATOR']);

    await signIn(merchant.tenant);
    await page.getByRole('navigation', { name: 'Portal' }).getByRole('link', { name: 'Reconciliation' }).click();
    await page.waitForURL(`${baseUrl}/portal/reconciliation`);
    const table = page.getByRole('table', { name: 'Differences' });
    const lines = await table.locator('tbody tr').allInnerTexts();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('Amounts differ');
    expect(lines[0]).toContain('121.00');
    expect(lines[0]).toContain('Being worked on');
    // Read-only: nothing on the page can change a difference.
    expect(await page.locator('main form, main button').count()).toBe(0);
    const html = await page.content();
    expect(html).not.toContain(`/portal/payments/${theirs.id}"`);
    expect(html).not.toContain('130.00');

    await Promise.all([
      page.waitForURL(`${baseUrl}/portal/reconciliation/${mine.id}`),
      table.getByRole('link', { name: 'Amounts differ' }).click(),
    ]);
    const facts = await page.locator('dl.facts').innerText();
    expect(facts).toContain('QPORTAL001');
    expect(facts).toContain('120.00');
    expect(facts).toContain('121.00');
    await page.getByRole('link', { name: new RegExp(`charge ${ours.id}`) }).click();
    await page.waitForURL(`${baseUrl}/portal/payments/${ours.id}`);

    for (const id of [foreign.id, '999999999', 'not-an-id']) {
      const res = await page.goto(`${baseUrl}/portal/reconciliation/${id}`);
      expect([id, res!.status()]).toEqual([id, 404]);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Not found');
    }
    // The other merchant sees its own difference, never ours.
    await signIn(other.tenant);
    await page.goto(`${baseUrl}/portal/reconciliation`);
    const theirLines = await page.getByRole('table', { name: 'Differences' }).locator('tbody tr').allInnerTexts();
    expect(theirLines).toHaveLength(1);
    expect(theirLines[0]).toContain("Not in the operator's records");
    expect((await page.goto(`${baseUrl}/portal/reconciliation/${mine.id}`))!.status()).toBe(404);
    expect(problems).toEqual([]);
  });
});
