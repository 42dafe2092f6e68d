import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, BrowserContext, chromium, Page } from 'playwright-core';
import { checkoutStatus, initiateCheckout, waitForCheckout } from '../support/collections-fixtures';
import {
  createGatewayMerchant,
  freePort,
  GatewayMerchant,
  IsolatedSandbox,
  MerchantReceiver,
  ROOT,
  startIsolatedSandbox,
  stopClaiming,
} from '../support/gateway-fixtures';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SETTLE_DELAY_MS = 700;
const MINUTE_MS = 1000;
const SCREENSHOT = join(ROOT, 'docs', 'checkout-page.png');

/**
 * The hosted checkout page in a real browser (headless Chromium): what the payer sees, paying, the processing
 * state, the return to the merchant, a failed payment with a retry, and the expired and unknown pages
 * (provider contract §5 "Checkout"). The app listens on a real port and PUBLIC_BASE_URL points at it, so the
 * redirect_url the merchant gets is the address the browser opens.
 */
describe('hosted checkout page in headless Chromium', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let merchant: GatewayMerchant;
  let browser: Browser;
  let baseUrl: string;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `Chromium was not found at ${CHROMIUM}. The hosted-page tests need a real browser: install it ` +
          '(e.g. `apt-get install chromium`, as CI does) or set CHROMIUM_PATH to its executable.',
      );
    }
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    sandbox = await startIsolatedSandbox({
      SANDBOX_SETTLE_DELAY_MS: String(SETTLE_DELAY_MS),
      SANDBOX_MINUTE_MS: String(MINUTE_MS),
      CALLBACK_RETRY_DELAYS_MS: '300,600,900',
      PUBLIC_BASE_URL: baseUrl,
    });
    ({ app, receiver } = sandbox);
    await app.listen(port, '127.0.0.1');
    merchant = await createGatewayMerchant(app);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await sandbox?.close();
  });

  /** A page whose console errors and uncaught exceptions are collected; pages of ours must produce none. */
  async function openPage(): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
    const context = await browser.newContext({ viewport: { width: 420, height: 860 }, locale: 'en-GB' });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' && page.url().startsWith(`${baseUrl}/`)) problems.push(`console: ${message.text()} @ ${page.url()}`);
    });
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    return { context, page, problems };
  }

  it('shows merchant, amount, narration, time left and the prefilled number; paying shows progress, then returns to the merchant', async () => {
    const { body, res, mtid, reference } = await initiateCheckout(app, merchant, receiver, {
      amount: 2500,
      expires_in: 120,
      narration: 'Order #42: two concert tickets',
      payer_msisdn: '254712345678',
    });
    expect(res.body.redirect_url).toBe(`${baseUrl}/checkout/${reference}`);
    const { context, page, problems } = await openPage();
    try {
      const response = await page.goto(res.body.redirect_url);
      expect(response?.status()).toBe(200);
      await expect(page.title()).resolves.toContain(`Client ${merchant.clientCode}`);
      await expect(page.locator('h1').textContent()).resolves.toBe(`Pay Client ${merchant.clientCode}`);
      await expect(page.locator('#amount-due').textContent()).resolves.toBe('KES 2,500');
      await expect(page.getByText('Order #42: two concert tickets').isVisible()).resolves.toBe(true);
      await page.locator('#time-left', { hasText: /^\d+ min \d{2} s$/ }).waitFor({ timeout: 5000 });
      const left = (await page.locator('#time-left').textContent())!;
      const minutes = Number(left.split(' ')[0]);
      // 120 sandbox minutes of 1 s each: about two real minutes left.
      expect(minutes).toBeGreaterThanOrEqual(1);
      expect(minutes).toBeLessThanOrEqual(2);

      const msisdn = page.getByLabel('Mobile-money phone number');
      await expect(msisdn.getAttribute('id')).resolves.toBe('msisdn');
      await expect(msisdn.inputValue()).resolves.toBe('254712345678');
      const payButton = page.locator('#pay');
      await expect(payButton.textContent()).resolves.toBe('Pay KES 2,500');
      await expect(payButton.isEnabled()).resolves.toBe(true);

      // The picture of the page in the docs: written when missing or when UPDATE_SCREENSHOTS is set, so a plain
      // test run leaves the committed file alone.
      const png = await page.screenshot({ fullPage: true });
      expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
      if (process.env.UPDATE_SCREENSHOTS || !existsSync(SCREENSHOT)) {
        mkdirSync(join(ROOT, 'docs'), { recursive: true });
        writeFileSync(SCREENSHOT, png);
      }

      // The page says so at the click, before its request is answered: the session is 851 once the answer is in.
      // The worker stops claiming meanwhile, so the page and the session are read while the payment is processing.
      const startClaiming = await stopClaiming(app);
      const started = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname.endsWith('/pay'));
      await payButton.click();
      const status = page.getByRole('status');
      await status.getByText('Confirm the payment on your phone').waitFor({ state: 'visible', timeout: 5000 });
      await expect(payButton.isDisabled()).resolves.toBe(true);
      await expect(payButton.textContent()).resolves.toBe('Processing…');
      expect((await started).ok()).toBe(true);
      expect((await checkoutStatus(app, merchant, mtid)).body.status).toBe(851);
      startClaiming();

      const landing = new URL(body.redirect_url);
      await page.waitForURL((url) => url.origin === landing.origin && url.pathname === landing.pathname, { timeout: 15_000 });
      const arrived = new URL(page.url());
      expect(arrived.searchParams.get('merchant_transaction_id')).toBe(mtid);
      expect(arrived.searchParams.get('checkout_reference')).toBe(reference);
      const paid = await waitForCheckout(app, merchant, mtid, 801);
      expect(paid.payments).toEqual([expect.objectContaining({ payment_status: 700, payer_msisdn: '254712345678' })]);
      // The merchant's landing page was really requested by the browser.
      expect(receiver.received.some((r) => r.method === 'GET' && r.path.startsWith(`${landing.pathname}?`))).toBe(true);

      // Opening the page of a paid checkout again sends the payer straight to the merchant.
      await page.goto(res.body.redirect_url);
      expect(new URL(page.url()).pathname).toBe(landing.pathname);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('a failed payment (254700000001 typed in) says so clearly and re-enables Pay; the retry with another number succeeds', async () => {
    const { body, res, mtid } = await initiateCheckout(app, merchant, receiver, { amount: 700, expires_in: 120 });
    const { context, page, problems } = await openPage();
    try {
      await page.goto(res.body.redirect_url);
      const input = page.locator('#msisdn');
      await input.fill('254700000001');
      // The worker stops claiming until the page has shown its progress, which the failure would replace.
      const startClaiming = await stopClaiming(app);
      await page.locator('#pay').click();
      const status = page.getByRole('status');
      await status.getByText('Confirm the payment on your phone').waitFor({ timeout: 5000 });
      startClaiming();
      await status.getByText('The payment did not go through').waitFor({ timeout: 15_000 });
      await expect(status.textContent()).resolves.toContain('try again');
      await expect(page.locator('#pay').isEnabled()).resolves.toBe(true);
      await expect(input.isEnabled()).resolves.toBe(true);
      await expect(page.locator('#pay').textContent()).resolves.toBe('Pay KES 700');
      const failed = await checkoutStatus(app, merchant, mtid);
      expect(failed.body.status).toBe(803);
      expect(failed.body.payments).toEqual([expect.objectContaining({ payment_status: 701 })]);

      // A malformed number is caught on the page before anything is sent.
      await input.fill('not a number');
      await page.locator('#pay').click();
      await status.getByText('Enter the phone number with its country code').waitFor({ timeout: 5000 });
      expect((await checkoutStatus(app, merchant, mtid)).body.payments).toHaveLength(1);

      await input.fill('254712000999');
      await page.locator('#pay').click();
      const landing = new URL(body.redirect_url);
      await page.waitForURL((url) => url.pathname === landing.pathname, { timeout: 15_000 });
      expect(new URL(page.url()).searchParams.get('merchant_transaction_id')).toBe(mtid);
      const paid = await waitForCheckout(app, merchant, mtid, 801);
      expect(paid.payments.map((p: { payment_status: number }) => p.payment_status)).toEqual([701, 700]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('renders the expired and the unknown checkout pages as explanations, with no form and no errors', async () => {
    const { res, mtid } = await initiateCheckout(app, merchant, receiver, { amount: 100, expires_in: 1 });
    await waitForCheckout(app, merchant, mtid, 820, 10_000);
    const { context, page, problems } = await openPage();
    try {
      const expired = await page.goto(res.body.redirect_url);
      expect(expired?.status()).toBe(410);
      await expect(page.getByRole('alert').locator('h1').textContent()).resolves.toBe('Checkout expired');
      await expect(page.getByText('The time to pay this checkout has run out.').isVisible()).resolves.toBe(true);
      expect(await page.locator('#pay').count()).toBe(0);

      const unknown = await page.goto(`${baseUrl}/checkout/CHK0000000000000000`);
      expect(unknown?.status()).toBe(404);
      await expect(page.getByRole('alert').locator('h1').textContent()).resolves.toBe('Checkout not found');
      await expect(page.getByText('There is no checkout at this address.').isVisible()).resolves.toBe(true);
      expect(await page.locator('#pay').count()).toBe(0);
      // The document status is the message; nothing else (scripts, styles under the CSP) may fail.
      expect(problems.filter((p) => !/Failed to load resource: the server responded with a status of (404|410)/.test(p))).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('the page counts down and, when the time runs out while open, disables paying', async () => {
    const { res } = await initiateCheckout(app, merchant, receiver, { amount: 100, expires_in: 3 });
    const { context, page, problems } = await openPage();
    try {
      await page.goto(res.body.redirect_url);
      await page.locator('#time-left').getByText('expired').waitFor({ timeout: 10_000 });
      await expect(page.locator('#pay').isDisabled()).resolves.toBe(true);
      await expect(page.getByRole('status').textContent()).resolves.toContain('This checkout has expired');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
