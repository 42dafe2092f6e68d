import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SERVICE_STATUS } from '../../src/airtime/airtime';
import { DELIVERY_STATUS } from '../../src/callbacks/delivery/callback-deliverer.service';
import { HOLD_STATUS, IN_FLIGHT_RAILS } from '../../src/float/float-holds.service';
import { PAYOUT_KINDS, PAYOUT_STATUS } from '../../src/payouts/payout';
import { createTestApp, dataSource } from '../support/test-app';

/**
 * The status codes and strings of disbursements and callback deliveries have one home, their TypeScript constants;
 * the database holds copies its migrations wrote (CHECK constraints, column defaults, partial indexes). This test fails
 * when a copy drifts.
 */
describe('disbursement and delivery statuses: the constants and the database agree', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(async () => app?.close());

  /** The literals of an expression Postgres printed: its quoted strings, or else its integers. */
  function literals(expression: string): Array<string | number> {
    const strings = [...expression.matchAll(/'([^']*)'/g)].map((m) => m[1]);
    return strings.length > 0 ? strings : [...expression.matchAll(/\b\d+\b/g)].map((m) => Number(m[0]));
  }

  /** The CHECK constraints of one column, as Postgres prints them. */
  async function checks(table: string, column: string): Promise<string[]> {
    const rows: Array<{ def: string }> = await dataSource(app).query(
      `SELECT pg_get_constraintdef(c.oid) AS def FROM pg_constraint c
       JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
       WHERE c.contype = 'c' AND c.conrelid = $1::regclass AND a.attname = $2 AND cardinality(c.conkey) = 1`,
      [table, column],
    );
    return rows.map((r) => r.def);
  }

  /** The values one column's CHECK allows, when it lists them. */
  async function allowed(table: string, column: string): Promise<Array<string | number>> {
    const defs = await checks(table, column);
    expect(defs).toHaveLength(1);
    return literals(defs[0]).sort();
  }

  async function columnDefault(table: string, column: string): Promise<string | number> {
    const [row] = await dataSource(app).query(
      `SELECT column_default AS d FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 AND column_name = $2`,
      [table, column],
    );
    return literals(row.d)[0];
  }

  async function indexPredicate(index: string): Promise<Array<string | number>> {
    const [row] = await dataSource(app).query(
      `SELECT pg_get_expr(i.indpred, i.indrelid) AS p FROM pg_index i WHERE i.indexrelid = $1::regclass`,
      [index],
    );
    return literals(row.p).sort();
  }

  const sorted = (values: Record<string, string | number> | readonly (string | number)[]) => Object.values(values).sort();

  it('payouts: kinds and statuses, starting PENDING; reconciliation scans PENDING and JAMMED', async () => {
    expect(await allowed('payouts', 'kind')).toEqual(sorted(PAYOUT_KINDS));
    expect(await allowed('payouts', 'status')).toEqual(sorted(PAYOUT_STATUS));
    expect(await columnDefault('payouts', 'status')).toBe(PAYOUT_STATUS.PENDING);
    expect(await indexPredicate('payouts_unresolved_idx')).toEqual(sorted([PAYOUT_STATUS.PENDING, PAYOUT_STATUS.JAMMED]));
  });

  it('airtime recipients: statuses within the range the table allows, starting UNPROCESSED; reconciliation scans PROCESSING and JAMMED', async () => {
    const [def] = await checks('airtime_recipients', 'service_status');
    const [low, high] = literals(def) as number[];
    for (const status of Object.values(SERVICE_STATUS)) expect(status >= low && status <= high).toBe(true);
    expect(await columnDefault('airtime_recipients', 'service_status')).toBe(SERVICE_STATUS.UNPROCESSED);
    expect(await indexPredicate('airtime_recipients_unresolved_idx')).toEqual(sorted([SERVICE_STATUS.PROCESSING, SERVICE_STATUS.JAMMED]));
  });

  it('float holds: statuses, starting HELD; the reserved balance reads HELD; rails are in-flight ledger kinds', async () => {
    expect(await allowed('float_holds', 'status')).toEqual(sorted(HOLD_STATUS));
    expect(await columnDefault('float_holds', 'status')).toBe(HOLD_STATUS.HELD);
    expect(await indexPredicate('float_holds_held_idx')).toEqual([HOLD_STATUS.HELD]);
    expect(await allowed('float_reservations', 'rail')).toEqual(sorted(IN_FLIGHT_RAILS));
    const kinds = await allowed('ledger_accounts', 'kind');
    for (const rail of IN_FLIGHT_RAILS) expect(kinds).toContain(rail);
  });

  it('callback deliveries: statuses, starting PENDING; the partial indexes the relay reads through name PENDING', async () => {
    expect(await allowed('callback_deliveries', 'status')).toEqual(sorted(DELIVERY_STATUS));
    expect(await columnDefault('callback_deliveries', 'status')).toBe(DELIVERY_STATUS.PENDING);
    expect(await indexPredicate('callback_deliveries_due_idx')).toEqual([DELIVERY_STATUS.PENDING]);
    expect(await indexPredicate('callback_deliveries_to_relay_idx')).toEqual([DELIVERY_STATUS.PENDING]);
  });
});
