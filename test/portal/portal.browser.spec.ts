import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { join } from 'node:path';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { ApiKeysService } from '../../src/auth/gateway/api-keys.service';
import { CallbackSettingsService } from '../../src/clients/callback-settings.service';
import { verifySignature } from '../support/callback-signature';
import { createTenant, dataSource, TestTenant } from '../support/test-app';
import {
  chargeBody,
  createGatewayMerchant,
  freePort,
  gateway,
  GatewayMerchant,
  IsolatedSandbox,
  MerchantReceiver,
  ROOT,
  signingSecretsOf,
  sleep,
  startIsolatedSandbox,
  waitFor,
  waitForPaymentStatus,
} from '../support/gateway-fixtures';
import { createPayoutMerchant, localPayoutBody, PAYOUT_PATHS, waitForPayoutStatus } from '../support/disbursement-fixtures';
import { launchChromium, signInPortal } from '../support/portal-browser';

/** Long enough for one test's steps; every test starts with a fresh session (beforeEach). */
const IDLE_MS = 15_000;
const screenshot = (name: string) => join(ROOT, 'docs', `portal-${name}.png`);

/**
 * The merchant portal in headless Chromium (issue 12): sign-in with the client's wallet user, API keys used on
 * POST /v1/auth and refused once revoked, callback settings per kind and secret rotation, a sandbox payment and a
 * payout in their lists, Resend with the same X-Event-Id, CSRF-less posts refused, another client's ids → 404,
 * CSV export, idle expiry, throttled sign-in; no console errors on any page. Screenshots go to docs/portal-*.png.
 */
describe('merchant portal in headless Chromium', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let receiver: MerchantReceiver;
  let merchant: GatewayMerchant;
  let other: GatewayMerchant;
  let browser: Browser;
  let page: Page;
  let baseUrl: string;
  const problems: string[] = [];
  const visited = new Set<string>();

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    sandbox = await startIsolatedSandbox({
      SANDBOX_SETTLE_DELAY_MS: '200',
      CALLBACK_RETRY_DELAYS_MS: '300,600,900',
      PUBLIC_BASE_URL: baseUrl,
      PORTAL_IDLE_TIMEOUT_MS: String(IDLE_MS),
      // The sign-in throttle the portal shares with wallet login (issue 22): 5 failures per username a minute.
      LOGIN_RATE_LIMIT_PER_MINUTE: '5',
    });
    ({ app, receiver } = sandbox);
    await app.listen(port, '127.0.0.1');
    merchant = await createPayoutMerchant(app);
    other = await createGatewayMerchant(app);
    browser = await launchChromium();
    ({ page } = await openContext());
  });

  beforeEach(async () => signIn(page, merchant.tenant));

  afterAll(async () => {
    await browser?.close();
    await sandbox?.close();
  });

  async function openContext(viewport = { width: 1280, height: 900 }): Promise<{ context: BrowserContext; page: Page }> {
    const ctx = await browser.newContext({ viewport, locale: 'en-GB' });
    const p = await ctx.newPage();
    p.on('console', (message) => {
      // A page answered with an error status on purpose (404, 400) logs its own status; anything else counts.
      if (message.text().startsWith('Failed to load resource') && message.location().url === p.url()) return;
      if (message.type() === 'error' || message.type() === 'warning')
        problems.push(`console ${message.type()}: ${message.text()} @ ${message.location().url}`);
    });
    p.on('pageerror', (error) => problems.push(`pageerror: ${error.message} @ ${p.url()}`));
    p.on('load', () => visited.add(new URL(p.url()).pathname));
    return { context: ctx, page: p };
  }

  const signIn = (p: Page, tenant: Pick<TestTenant, 'username' | 'password'>) => signInPortal(p, baseUrl, tenant);

  const csrfOf = (p: Page) => p.locator('input[name=_csrf]').first().inputValue();
  const http = () => request(app.getHttpServer());

  it('signs the wallet user in with an HttpOnly, SameSite=Strict session cookie for /portal; pages need it', async () => {
    const { context: fresh, page: login } = await openContext();
    await login.goto(`${baseUrl}/portal/payments`);
    expect(new URL(login.url()).pathname).toBe('/portal/login');
    await login.screenshot({ path: screenshot('login'), fullPage: true });
    await signIn(login, merchant.tenant);
    expect(await login.getByRole('heading', { level: 1 }).textContent()).toBe('Overview');
    const [cookie] = await fresh.cookies();
    expect(cookie).toMatchObject({ name: 'portal_session', httpOnly: true, sameSite: 'Strict', path: '/portal', secure: false });
    const [stored] = await dataSource(app).query(
      `SELECT id, client_id, user_id FROM portal_sessions WHERE client_id = $1 ORDER BY created_at DESC LIMIT 1`,
      [merchant.clientId],
    );
    expect(stored.id).not.toBe(cookie.value); // only the token's hash is stored
    expect(stored.id).toMatch(/^[0-9a-f]{64}$/);

    // Sign out: back to sign-in, and the old cookie no longer opens a page.
    await Promise.all([login.waitForURL(`${baseUrl}/portal/login`), login.getByRole('button', { name: 'Sign out' }).click()]);
    await http().get('/portal').set('cookie', `portal_session=${cookie.value}`).expect(303).expect('location', '/portal/login');
    await fresh.close();
  });

  it('a wrong password and an unknown user get the same answer', async () => {
    const wrong = await http()
      .post('/portal/login')
      .type('form')
      .send({ username: merchant.tenant.username, password: 'not the password' });
    const unknown = await http().post('/portal/login').type('form').send({ username: 'nobody-at-all', password: 'not the password' });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.headers['set-cookie']).toBeUndefined();
    const message = (html: string) => /<p class="notice err"[^>]*>([^<]*)<\/p>/.exec(html)?.[1];
    expect(message(wrong.text)).toBe('Wrong username or password.');
    expect(message(unknown.text)).toBe(message(wrong.text));
    // Same work for both: each is one argon2 verification (UsersService.verify checks unknown users against a dummy hash).
    const time = async (username: string) => {
      const started = performance.now();
      await http().post('/portal/login').type('form').send({ username, password: 'still not it' });
      return performance.now() - started;
    };
    const known = await time(merchant.tenant.username);
    const stranger = await time('nobody-else');
    expect(stranger).toBeGreaterThan(known / 4);
    expect(known).toBeGreaterThan(stranger / 4);
  });

  it('API keys: a created key (secret shown once) obtains a token on POST /v1/auth; revoked, it and its tokens get 401', async () => {
    await page.goto(`${baseUrl}/portal/api-keys`);
    await page.getByRole('button', { name: 'Create a key' }).click();
    const consumerKey = (await page.locator('#new-consumer-key').textContent())!;
    const consumerSecret = (await page.locator('#new-consumer-secret').textContent())!;
    expect(consumerSecret).toMatch(/^cs_/);
    await page.screenshot({ path: screenshot('api-keys'), fullPage: true });
    const auth = await http().post('/v1/auth').send({ consumer_key: consumerKey, consumer_secret: consumerSecret }).expect(200);
    const token = auth.body.access_token as string;
    await gateway(app, token).get('/v1/callbacks?reference=x').expect(200);

    // The secret is shown once: the list never shows it again.
    await page.goto(`${baseUrl}/portal/api-keys`);
    expect(await page.content()).not.toContain(consumerSecret);
    expect(await page.getByRole('button', { name: `Revoke ${merchant.consumerKey}` }).count()).toBe(1); // several live keys

    await page.getByRole('button', { name: `Revoke ${consumerKey}` }).click();
    await page.waitForURL(/notice=revoked/);
    expect(await page.getByRole('status').textContent()).toContain('revoked');
    await http().post('/v1/auth').send({ consumer_key: consumerKey, consumer_secret: consumerSecret }).expect(401);
    await gateway(app, token).get('/v1/callbacks?reference=x').expect(401);
    await gateway(app, merchant.token).get('/v1/callbacks?reference=x').expect(200); // the other key still works
  });

  it('callback settings per kind: URL and Basic credentials saved, the password never shown back; secret rotation with overlap', async () => {
    const settings = app.get(CallbackSettingsService);
    await page.goto(`${baseUrl}/portal/callbacks`);
    for (const kind of ['collections', 'payouts', 'airtime'] as const) {
      const url = receiver.url(`/portal-${kind}`);
      await page.locator(`#${kind}-url`).fill(url);
      await page.locator(`#${kind}-username`).fill(`user-${kind}`);
      await page.locator(`#${kind}-password`).fill(`secret-password-${kind}`);
      await page.getByRole('button', { name: `Save ${kind} callbacks` }).click();
      await page.waitForURL(/notice=saved/);
      expect(await settings.endpointFor(dataSource(app).manager, merchant.clientId, kind)).toEqual({
        url,
        username: `user-${kind}`,
        password: `secret-password-${kind}`,
      });
      expect(await page.locator(`#${kind}-url`).inputValue()).toBe(url);
      expect(await page.locator(`#${kind}-password`).inputValue()).toBe('');
      expect(await page.content()).not.toContain(`secret-password-${kind}`);
    }
    // Saving again with the password left empty keeps the stored one.
    await page.locator('#payouts-url').fill(receiver.url('/portal-payouts-2'));
    await page.getByRole('button', { name: 'Save payouts callbacks' }).click();
    await page.waitForURL(/notice=saved/);
    expect((await settings.endpointFor(dataSource(app).manager, merchant.clientId, 'payouts'))?.password).toBe('secret-password-payouts');
    // A URL the gateway refuses is not saved.
    await page.locator('#airtime-url').fill('ftp://example.com/x');
    // The browser itself would refuse it in a type=url field; the server must refuse it too.
    await page
      .locator('#airtime-url')
      .evaluate((input: { setAttribute(name: string, value: string): void }) => input.setAttribute('type', 'text'));
    await page.getByRole('button', { name: 'Save airtime callbacks' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('callback URL must be');
    expect((await settings.endpointFor(dataSource(app).manager, merchant.clientId, 'airtime'))?.url).toBe(receiver.url('/portal-airtime'));

    await page.goto(`${baseUrl}/portal/callbacks`);
    const previous = merchant.signingSecret;
    await page.getByRole('button', { name: 'Rotate the signing secret' }).click();
    const rotated = (await page.locator('#new-signing-secret').textContent())!;
    expect(rotated).toMatch(/^whsec_/);
    expect(await page.getByRole('region', { name: 'Signing secret' }).textContent()).toContain('webhook-signature: v1,<new> v1,<previous>');
    expect(await page.content()).toContain('previous secret stays valid until');
    expect(await signingSecretsOf(app, merchant.clientId)).toEqual([rotated, previous]);
    await page.screenshot({ path: screenshot('callbacks'), fullPage: true });
    merchant.signingSecret = rotated;
  });

  let chargeReference = '';
  let chargeUrl = '';
  let payoutReference = '';

  it('a sandbox payment charged through the API appears in the payments list; a payout in the payouts list', async () => {
    chargeUrl = receiver.url();
    const body = chargeBody(merchant, { callback_url: chargeUrl, description: 'Portal order 1' });
    chargeReference = body.external_reference as string;
    const charge = await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(body).expect(200);
    await waitForPaymentStatus(app, merchant, charge.body.charge_request_id, 700);
    await page.goto(`${baseUrl}/portal/payments`);
    const row = page.getByRole('row').filter({ hasText: chargeReference });
    expect(await row.textContent()).toContain('Successful');
    expect(await row.textContent()).toMatch(/KES\s100\.00\s*KES\s10\.00/); // amount and fee in the currency's minor units
    await page.screenshot({ path: screenshot('payments'), fullPage: true });

    const payout = localPayoutBody(merchant, { callback_url: receiver.url() });
    await gateway(app, merchant.token).post(PAYOUT_PATHS.local).send(payout).expect(200);
    await waitForPayoutStatus(app, merchant, payout.payout_reference as string, 700);
    await page.goto(`${baseUrl}/portal/payouts?q=${payout.payout_reference}`);
    payoutReference = payout.payout_reference as string;
    expect(
      await page
        .getByRole('row')
        .filter({ hasText: payout.payout_reference as string })
        .textContent(),
    ).toContain('Successful');
    await page.screenshot({ path: screenshot('payouts'), fullPage: true });

    await page.goto(`${baseUrl}/portal`);
    const text = (await page.locator('main').textContent())!;
    expect(text).toContain(merchant.settlementAccountNumber);
    expect(text).toMatch(/1 successful of 1/);
    await page.screenshot({ path: screenshot('overview'), fullPage: true });
  });

  it('deliveries show every attempt; Resend sends the same X-Event-Id and body again, newly signed', async () => {
    const [first] = await waitFor('the charge callback', () => (receiver.at(chargeUrl).length > 0 ? receiver.at(chargeUrl) : undefined));
    const eventId = first.headers['x-event-id'] as string;
    await page.goto(`${baseUrl}/portal/deliveries?q=${chargeReference}`);
    await waitFor('the delivered status', async () => {
      await page.reload();
      return (await page.getByRole('row').filter({ hasText: eventId }).textContent())?.includes('Delivered');
    });
    await page.screenshot({ path: screenshot('deliveries'), fullPage: true });
    await page.getByRole('link', { name: eventId }).click();
    expect(await page.locator('#event-id').textContent()).toBe(eventId);
    await page.getByRole('button', { name: 'Resend' }).click();
    await page.waitForURL(/notice=resent/);
    const [, again] = await waitFor('the resent callback', () =>
      receiver.at(chargeUrl).length === 2 ? receiver.at(chargeUrl) : undefined,
    );
    expect(again.headers['x-event-id']).toBe(eventId);
    expect(again.rawBody).toBe(first.rawBody);
    expect(verifySignature(merchant.signingSecret, again.rawBody, again.headers['x-signature'] as string)).toBe(true);
    expect(new Webhook(merchant.signingSecret).verify(again.rawBody, again.headers as Record<string, string>)).toEqual(again.body);
    await waitFor('the resend attempt on the page', async () => {
      await page.reload();
      return (await page.getByRole('table').textContent())?.includes('Resend');
    });
    const attempts = await page.getByRole('table').getByRole('row').allTextContents();
    expect(attempts).toHaveLength(3); // header, scheduled attempt, resend
    expect(attempts[1]).toContain('200');
    await page.screenshot({ path: screenshot('delivery'), fullPage: true });
  });

  it('form posts without the CSRF token, or with a wrong one, are refused with 403 and change nothing', async () => {
    await page.goto(`${baseUrl}/portal/api-keys`);
    const csrf = await csrfOf(page);
    const keysBefore = await app.get(ApiKeysService).list(merchant.clientId);
    const endpointBefore = await app.get(CallbackSettingsService).endpointFor(dataSource(app).manager, merchant.clientId, 'collections');
    const secretsBefore = await signingSecretsOf(app, merchant.clientId);
    const attempts: Array<[string, Record<string, string>]> = [
      ['/portal/api-keys', {}],
      [`/portal/api-keys/${merchant.consumerKey}/revoke`, {}],
      ['/portal/callbacks/collections', { url: 'https://attacker.example/hook', username: '', password: '' }],
      ['/portal/callbacks/signing-secret/rotate', {}],
      ['/portal/logout', {}],
    ];
    for (const [path, form] of attempts) {
      for (const token of [undefined, 'wrong', `${csrf}x`]) {
        const res = await page.request.post(`${baseUrl}${path}`, {
          form: token === undefined ? form : { ...form, _csrf: token },
          maxRedirects: 0,
        });
        expect([path, res.status()]).toEqual([path, 403]);
      }
    }
    expect(await app.get(ApiKeysService).list(merchant.clientId)).toEqual(keysBefore);
    expect(await app.get(CallbackSettingsService).endpointFor(dataSource(app).manager, merchant.clientId, 'collections')).toEqual(
      endpointBefore,
    );
    expect(await signingSecretsOf(app, merchant.clientId)).toEqual(secretsBefore);
    await page.goto(`${baseUrl}/portal`); // still signed in
    expect(new URL(page.url()).pathname).toBe('/portal');
  });

  it("another client's ids are 404 pages and its data never appears", async () => {
    const url = receiver.url();
    const body = chargeBody(other, { callback_url: url, description: 'Other client order' });
    await gateway(app, other.token).post('/v1/mobile-money/charge').send(body).expect(200);
    const [callback] = await waitFor('the other client callback', () => (receiver.at(url).length > 0 ? receiver.at(url) : undefined));
    const foreignEvent = callback.headers['x-event-id'] as string;

    const res = await page.goto(`${baseUrl}/portal/deliveries/${foreignEvent}`);
    expect(res!.status()).toBe(404);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Not found');
    expect((await page.goto(`${baseUrl}/portal/deliveries/not-a-uuid`))!.status()).toBe(404);
    await page.screenshot({ path: screenshot('not-found'), fullPage: true });

    await page.goto(`${baseUrl}/portal/api-keys`);
    const csrf = await csrfOf(page);
    const resend = await page.request.post(`${baseUrl}/portal/deliveries/${foreignEvent}/resend`, {
      form: { _csrf: csrf },
      maxRedirects: 0,
    });
    expect(resend.status()).toBe(404);
    const revoke = await page.request.post(`${baseUrl}/portal/api-keys/${other.consumerKey}/revoke`, {
      form: { _csrf: csrf },
      maxRedirects: 0,
    });
    expect(revoke.status()).toBe(404);
    await http().post('/v1/auth').send({ consumer_key: other.consumerKey, consumer_secret: other.consumerSecret }).expect(200);
    await sleep(500);
    expect(receiver.at(url)).toHaveLength(1);

    const filtered = await page.request.get(`${baseUrl}/portal/payments?q=${body.external_reference}`);
    expect(await filtered.text()).toContain('No payments match.');
    for (const path of ['/portal/payments', '/portal/deliveries', '/portal/payments.csv', '/portal/api-keys']) {
      const page2 = await page.request.get(`${baseUrl}${path}`);
      expect(page2.status()).toBe(200);
      const text = await page2.text();
      expect(text).not.toContain(body.external_reference as string);
      expect(text).not.toContain(foreignEvent);
      expect(text).not.toContain(other.consumerKey);
    }
  });

  it('CSV export: the filtered list, RFC 4180 quoting and a guard on cells a spreadsheet would run as formulas', async () => {
    const prefix = `csv-${Date.now()}`;
    const descriptions = ['=HYPERLINK("http://evil.example","x")', 'Order "A", two lines\nsecond', '+1 bonus', '@SUM(A1)', '-2 credit'];
    const ids: string[] = [];
    for (const [i, description] of descriptions.entries()) {
      const body = chargeBody(merchant, { external_reference: `${prefix}-${i}`, description });
      ids.push(String((await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(body).expect(200)).body.charge_request_id));
    }
    const failed = chargeBody(merchant, { external_reference: `${prefix}-failed`, payer_msisdn: '254700000001', description: 'fails' });
    const failedId = (await gateway(app, merchant.token).post('/v1/mobile-money/charge').send(failed).expect(200)).body.charge_request_id;
    await waitForPaymentStatus(app, merchant, failedId, 701);
    for (const id of ids) await waitForPaymentStatus(app, merchant, id, 700);

    const csv = await page.request.get(`${baseUrl}/portal/payments.csv?q=${prefix}&status=700`);
    expect(csv.status()).toBe(200);
    expect(csv.headers()['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers()['content-disposition']).toMatch(/^attachment; filename="payments-\d{4}-\d{2}-\d{2}\.csv"$/);
    const text = await csv.text();
    const lines = text.split('\r\n');
    expect(lines[0]).toBe(
      'payment_id,created_at,external_reference,payer_msisdn,currency,amount,fee,payment_status,description,settled_at',
    );
    expect(text).not.toContain(`${prefix}-failed`);
    expect(text).not.toContain(chargeReference);
    const line = (i: number) => lines.find((l) => l.includes(`,${prefix}-${i},`))!;
    expect(line(0)).toContain(`,"'=HYPERLINK(""http://evil.example"",""x"")",`);
    expect(text).toContain(`,"Order ""A"", two lines\nsecond",`);
    expect(line(2)).toContain(`,'+1 bonus,`);
    expect(line(3)).toContain(`,'@SUM(A1),`);
    expect(text).toContain(`,'-2 credit,`);
    // Ids and phone numbers stay text in a spreadsheet (="…"); amounts stay numbers.
    expect(line(2)).toMatch(
      new RegExp(`^"=""${ids[2]}""",\\d{4}-\\d{2}-\\d{2}T[\\d:.]+Z,${prefix}-2,"=""254712345678""",KES,100.0000,10.0000,700,`),
    );
    expect(text.endsWith('\r\n')).toBe(true);
    expect(lines.filter((l) => /^"=""\d+""",\d{4}-/.test(l))).toHaveLength(5);

    const failedOnly = await (await page.request.get(`${baseUrl}/portal/payments.csv?q=${prefix}&status=701`)).text();
    expect(failedOnly.trim().split('\r\n')).toHaveLength(2);
    expect(failedOnly).toContain(`,${prefix}-failed,`);
    const future = await (await page.request.get(`${baseUrl}/portal/payments.csv?from=2999-01-01`)).text();
    expect(future.trim().split('\r\n')).toHaveLength(1);
    expect((await page.request.get(`${baseUrl}/portal/payments.csv?from=yesterday`)).status()).toBe(400);
  });

  it('every page fits a 390 px phone and a 1280 px screen: nothing wider than the page, tables as cards on the phone', async () => {
    const idOf = async (sql: string, reference: string) => String((await dataSource(app).query(sql, [merchant.clientId, reference]))[0].id);
    const paymentId = await idOf(`SELECT id FROM payments WHERE client_id = $1 AND external_reference = $2`, chargeReference);
    const payoutId = await idOf(`SELECT id FROM payouts WHERE client_id = $1 AND payout_reference = $2`, payoutReference);
    const eventId = await idOf(`SELECT id FROM callback_deliveries WHERE client_id = $1 AND reference = $2`, chargeReference);
    const pages: Array<[string, string | null]> = [
      ['/portal', 'overview'],
      ['/portal?days=30', null],
      ['/portal/payments', 'payments'],
      [`/portal/payments/${paymentId}`, 'payment'],
      ['/portal/payouts', 'payouts'],
      [`/portal/payouts/${payoutId}`, 'payout'],
      ['/portal/deliveries', 'deliveries'],
      [`/portal/deliveries/${eventId}`, null],
      ['/portal/statements', 'statements'],
      ['/portal/api-keys', null],
      ['/portal/callbacks', null],
      ['/portal/nope', null],
    ];
    for (const width of [390, 1280]) {
      const { context, page: p } = await openContext({ width, height: width === 390 ? 844 : 900 });
      await signIn(p, merchant.tenant);
      for (const [path, shot] of pages) {
        await p.goto(`${baseUrl}${path}`);
        // The page itself never scrolls sideways, and no table or card is cut off inside its box.
        const overflowing = await p.evaluate<string[]>(`(() => {
          const wide = document.documentElement.scrollWidth > document.documentElement.clientWidth ? ['page'] : [];
          for (const el of document.querySelectorAll('main, .table-wrap, .card, table'))
            if (el.scrollWidth > el.clientWidth + 1) wide.push(el.tagName + '.' + el.className);
          return wide;
        })()`);
        expect([width, path, overflowing]).toEqual([width, path, []]);
        if (width === 390 && path === '/portal') {
          // The charts' words as rendered on the phone (an SVG's text shrinks with its viewBox): each is readable.
          const sizes = await p.evaluate<number[]>(`(() => {
            const sizes = [];
            const walker = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT);
            for (let node = walker.nextNode(); node; node = walker.nextNode()) {
              const el = node.parentElement;
              if (!el.closest('.chart') || !node.textContent.trim() || el.closest('title')) continue;
              const scale = el instanceof SVGGraphicsElement ? el.getScreenCTM().a : 1;
              sizes.push(parseFloat(getComputedStyle(el).fontSize) * scale);
            }
            return sizes;
          })()`);
          expect(sizes.length).toBeGreaterThan(0);
          expect(Math.min(...sizes)).toBeGreaterThanOrEqual(11);
        }
        if (width === 390 && path === '/portal/api-keys') {
          // Code is broken between words if it must wrap, never inside one ("/v1/auth" whole on one line).
          const split = await p.evaluate<string[]>(`(() => {
            const split = [];
            for (const code of document.querySelectorAll('main p code')) {
              const text = code.firstChild;
              for (const word of text.textContent.matchAll(/\\S+/g)) {
                const range = document.createRange();
                range.setStart(text, word.index);
                range.setEnd(text, word.index + word[0].length);
                if (new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1) split.push(word[0]);
              }
            }
            return split;
          })()`);
          expect(split).toEqual([]);
        }
        if (width === 390 && path === '/portal/payments') {
          // A card: each value beside its column's label.
          const label = await p.evaluate<string>(`getComputedStyle(document.querySelector('td[data-label="Amount"]'), '::before').content`);
          expect(label).toBe('"Amount"');
          expect(await p.locator('td[data-label="Amount"]').first().isVisible()).toBe(true);
        }
        if (shot && (width === 390 || ['payment', 'payout', 'statements'].includes(shot)))
          await p.screenshot({ path: screenshot(`${width === 390 ? 'mobile-' : ''}${shot}`), fullPage: true });
      }
      await context.close();
    }
  });

  it('a session unused for PORTAL_IDLE_TIMEOUT_MS ends: the next page asks to sign in again', async () => {
    const { context: idle, page: p } = await openContext();
    await signIn(p, merchant.tenant);
    await p.goto(`${baseUrl}/portal/payments`);
    await sleep(IDLE_MS + 500);
    await p.goto(`${baseUrl}/portal/payments`);
    expect(new URL(p.url()).pathname).toBe('/portal/login');
    await idle.close();
  });

  it('sign-in is throttled per username: after 5 failures 429 with Retry-After, even for the right password', async () => {
    const tenant = await createTenant(app);
    for (let i = 0; i < 5; i++) {
      await http()
        .post('/portal/login')
        .type('form')
        .send({ username: tenant.username, password: `wrong-${i}` })
        .expect(401);
    }
    const throttled = await http().post('/portal/login').type('form').send({ username: tenant.username, password: tenant.password });
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(throttled.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(throttled.headers['set-cookie']).toBeUndefined();
    // Another user from the same address is not locked out by it.
    const fine = await http()
      .post('/portal/login')
      .type('form')
      .send({ username: merchant.tenant.username, password: merchant.tenant.password });
    expect(fine.status).toBe(303);
  });

  it('no page logged a console error or warning (CSP violations included)', () => {
    expect([...visited].sort()).toEqual(
      expect.arrayContaining([
        '/portal',
        '/portal/login',
        '/portal/api-keys',
        '/portal/callbacks',
        '/portal/payments',
        '/portal/payouts',
        '/portal/deliveries',
        '/portal/statements',
      ]),
    );
    expect(problems).toEqual([]);
  });
});
