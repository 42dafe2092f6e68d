import { existsSync } from 'node:fs';
import { Browser, chromium, Page } from 'playwright-core';
import type { TestTenant } from './test-app';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Debian's headless Chromium (never a downloaded one). */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium was not found at ${CHROMIUM}: install it or set CHROMIUM_PATH.`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** Signs a wallet user in through the portal's form and waits for the overview. */
export async function signInPortal(p: Page, baseUrl: string, tenant: Pick<TestTenant, 'username' | 'password'>): Promise<void> {
  await p.goto(`${baseUrl}/portal/login`);
  await p.getByLabel('Username').fill(tenant.username);
  await p.getByLabel('Password').fill(tenant.password);
  await Promise.all([p.waitForURL(`${baseUrl}/portal`), p.getByRole('button', { name: 'Sign in' }).click()]);
}
