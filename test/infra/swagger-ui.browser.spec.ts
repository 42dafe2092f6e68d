import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { existsSync } from 'node:fs';
import { Browser, chromium } from 'playwright-core';
import { createGatewayMerchant, freePort, GatewayMerchant } from '../support/gateway-fixtures';
import { createTestApp } from '../support/test-app';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** What the README tells a newcomer to do: authorize in Swagger UI with a gateway token and call a route from the page. */
describe('Swagger UI in headless Chromium', () => {
  let app: NestFastifyApplication;
  let merchant: GatewayMerchant;
  let browser: Browser;
  let baseUrl: string;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium was not found at ${CHROMIUM}: install it or set CHROMIUM_PATH`);
    app = await createTestApp();
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    await app.listen(port, '127.0.0.1');
    merchant = await createGatewayMerchant(app);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('sends the token set under Authorize as x-access-token on a gateway call made from the page', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${baseUrl}/docs`);

    await page.locator('.auth-wrapper button.authorize').click();
    const scheme = page.locator('.auth-container', { hasText: 'gateway-token' });
    await scheme.locator('input[type=text]').fill(merchant.token);
    await scheme.locator('button.authorize').click();
    await scheme.locator('button.btn-done').click();

    await page.locator('.opblock-summary-path[data-path="/v1/callbacks"]').click();
    const operation = page.locator('.opblock.is-open');
    await operation.locator('button.try-out__btn').click();
    await operation.locator('input[placeholder="reference"]').fill('ORDER-NONE');
    const [sent] = await Promise.all([
      page.waitForRequest((r) => r.url().startsWith(`${baseUrl}/v1/callbacks`)),
      operation.locator('button.execute').click(),
    ]);
    const answer = await sent.response();

    expect(sent.headers()['x-access-token']).toBe(merchant.token);
    expect(answer?.status()).toBe(200);
    expect(await answer?.json()).toEqual({ reference: 'ORDER-NONE', deliveries: [] });
    expect(errors).toEqual([]);
    await page.close();
  });
});
