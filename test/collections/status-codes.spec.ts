import { readFunctionSources } from '../../src/infra/database/function-sources';
import { CHECKOUT_STATUS } from '../../src/collections/checkout-session';
import { PAYMENT_STATUS } from '../../src/collections/payment';

/** The collections' SQL: what it writes of payment (7xx) and checkout (8xx) statuses. */
const COLLECTION_DOMAINS = ['charges', 'checkout', 'collections', 'split-settlements'];

/** Checkout statuses only TypeScript writes: the payer starting a payment (CheckoutSessionsService.startPayment). */
const WRITTEN_BY_TYPESCRIPT_ONLY: number[] = [CHECKOUT_STATUS.PROCESSING];

/**
 * The status codes have one list each, in TypeScript (PAYMENT_STATUS in src/collections/payment.ts, CHECKOUT_STATUS in
 * src/collections/checkout-session.ts); the collections' SQL functions write them as literals. Every status literal of
 * those sources is in the list, and every status of the list is known to the SQL (or named here as TypeScript's
 * alone), so a status added or changed on one side fails here until the other side has it.
 */
describe('payment and checkout status codes: the TypeScript lists and the SQL sources agree', () => {
  const sources = readFunctionSources().filter((s) => COLLECTION_DOMAINS.includes(s.file.split('/')[0]));
  /** Three-digit literals outside comments and strings, per file. */
  const literals = sources.map((s) => ({
    file: s.file,
    codes: [
      ...s.text
        .replace(/--.*$/gm, '')
        .replace(/'(?:[^']|'')*'/g, "''")
        .matchAll(/(?<![\w.$])([78]\d\d)(?![\w.])/g),
    ].map((m) => Number(m[1])),
  }));
  const written = new Set(literals.flatMap((l) => l.codes));

  it('reads the sources that write statuses', () => {
    expect(sources.map((s) => s.file)).toEqual(
      expect.arrayContaining(['collections/sql/checkout_follow_payments.sql', 'collections/sql/collection_settle_apply.sql']),
    );
    expect(written.size).toBeGreaterThan(0);
  });

  it('every 7xx literal of the SQL is a PAYMENT_STATUS, every 8xx a CHECKOUT_STATUS', () => {
    const payment = new Set<number>(Object.values(PAYMENT_STATUS));
    const checkout = new Set<number>(Object.values(CHECKOUT_STATUS));
    const unknown = literals.flatMap(({ file, codes }) =>
      codes.filter((code) => !(code < 800 ? payment : checkout).has(code)).map((code) => `${file}: ${code}`),
    );
    expect(unknown).toEqual([]);
  });

  it('every PAYMENT_STATUS and CHECKOUT_STATUS is known to the SQL, but those TypeScript alone writes', () => {
    const statuses = [...Object.entries(PAYMENT_STATUS), ...Object.entries(CHECKOUT_STATUS)];
    const missing = statuses.filter(([, code]) => !written.has(code) && !WRITTEN_BY_TYPESCRIPT_ONLY.includes(code));
    expect(missing).toEqual([]);
    expect(WRITTEN_BY_TYPESCRIPT_ONLY.filter((code) => written.has(code))).toEqual([]);
  });
});
