import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import type { PoolClient } from 'pg';
import request from 'supertest';
import { ArchiveRefused, archiveHistory } from '../../../src/admin/history-archive';
import {
  addMonths,
  ensurePartitions,
  formatMonth,
  monthOf,
  monthPartitions,
  parseMonth,
  partitionName,
} from '../../../src/infra/database/partitions';
import { pgPool } from '../../../src/infra/database/prepared';
import { balance, fund, ledgerViolations, moneyBody, moneyTestBed, post, transfer, transferBody } from '../../support/money-fixtures';
import { binary, readWorkbook } from '../../support/statement-readers';
import { dataSource, TestTenant } from '../../support/test-app';

const HISTORY_TABLES = ['callback_attempts', 'postings', 'rail_callbacks', 'unmatched_rail_callbacks', 'wallet_transactions'];
const CLI = join(__dirname, '..', '..', '..', 'dist', 'src', 'admin', 'cli.js');

jest.setTimeout(180_000);

/**
 * Monthly partitions of the history tables. The test's money is written through the real paths, then booked in months
 * of 2001 by moving its timestamps (rows move between partitions on update), so no other test's rows are in them:
 * the test's months are its own, archived and all.
 */
describe('partitioned history', () => {
  let app: NestFastifyApplication;
  let tenant: TestTenant;
  let db: PoolClient;
  let walletA: string;
  let walletB: string;

  /** The partition of each row of `table` that belongs to the entries, sorted. */
  const partitionsOf = async (table: 'postings' | 'wallet_transactions', entries: string[]) => {
    const { rows } = await db.query<{ partition: string }>(
      table === 'postings'
        ? `SELECT tableoid::regclass::text AS partition FROM postings WHERE entry_id = ANY ($1) ORDER BY id`
        : `SELECT t.tableoid::regclass::text AS partition FROM wallet_transactions t JOIN wallet_operations o ON o.client_id = t.client_id AND o.id = t.operation_id
            WHERE o.entry_id = ANY ($1) ORDER BY t.id`,
      [entries],
    );
    return rows.map((r) => r.partition).sort();
  };

  /** Books the entries (postings, records, entry, operation) at `at`, as if they had been written then. */
  async function bookAt(entries: string[], at: string) {
    await db.query('BEGIN');
    await db.query(`UPDATE postings SET created_at = $2 WHERE entry_id = ANY ($1)`, [entries, at]);
    await db.query(`UPDATE journal_entries SET created_at = $2 WHERE id = ANY ($1)`, [entries, at]);
    await db.query(`UPDATE wallet_operations SET created_at = $2 WHERE entry_id = ANY ($1)`, [entries, at]);
    await db.query(
      `UPDATE wallet_transactions t SET created_at = $2, transaction_date = $2 FROM wallet_operations o
        WHERE o.id = t.operation_id AND o.entry_id = ANY ($1)`,
      [entries, at],
    );
    await db.query('COMMIT');
  }

  /** The entries of a wallet, in the order they were applied to it. */
  async function entriesOf(accountNumber: string): Promise<string[]> {
    const { rows } = await db.query<{ entry_id: string }>(
      `SELECT p.entry_id FROM postings p JOIN ledger_accounts a ON a.client_id = p.client_id AND a.id = p.account_id
       WHERE a.account_number = $1 ORDER BY p.account_seq`,
      [accountNumber],
    );
    return rows.map((r) => r.entry_id);
  }

  const statement = async (accountNumber: string, start: string, end: string) =>
    request(app.getHttpServer())
      .get('/api/v1/account-statements/doc')
      .query({ account_number: accountNumber, start_date: start, end_date: end, doc_type: 'EXCEL' })
      .set('authorization', tenant.auth)
      .buffer(true)
      .parse(binary);

  async function statementRows(accountNumber: string, start: string, end: string) {
    const res = await statement(accountNumber, start, end);
    expect(res.status).toBe(200);
    const { labels, rows } = await readWorkbook(res.body);
    return {
      opening: String(labels.get('Opening balance')),
      rows: rows.map((r) => [r.date.toISOString(), r.debit, r.credit, r.balance]),
    };
  }

  beforeAll(async () => {
    const bed = await moneyTestBed();
    app = bed.app;
    tenant = bed.tenant;
    db = await pgPool(dataSource(app)).connect();
    walletA = await bed.wallets.create();
    walletB = await bed.wallets.create();
    // Through the real paths: a funding, a transfer, a credit.
    await fund(app, tenant, walletA, '1000');
    expect((await transfer(app, tenant, transferBody(tenant, walletA, walletB, bed.noFee, 100))).status).toBe(201);
    expect((await post(app, tenant, 'CREDIT', moneyBody(tenant, walletB, bed.noFee, 50))).status).toBe(201);
  });
  afterAll(async () => {
    db?.release();
    await app?.close();
  });

  it('creates the current month and the next 3 on every history table, once', async () => {
    const created = await ensurePartitions(db, new Date('2001-01-20T12:00:00Z'));
    expect(created.map((p) => p.partition).sort()).toEqual(
      HISTORY_TABLES.flatMap((table) => ['2001_01', '2001_02', '2001_03', '2001_04'].map((month) => `${table}_${month}`)),
    );
    expect(created.every((p) => p.moved === 0)).toBe(true);
    expect(await ensurePartitions(db, new Date('2001-01-31T23:00:00Z'))).toEqual([]);
  });

  it('books money across a month boundary in two partitions, with balances, invariants and a statement right', async () => {
    const [funding, transferred] = await entriesOf(walletA);
    const [, credited] = await entriesOf(walletB);
    await bookAt([funding, transferred], '2001-01-31T23:59:59.999Z');
    await bookAt([credited], '2001-02-01T00:00:00Z');

    expect(await partitionsOf('postings', [funding, transferred])).toEqual(Array(4).fill('postings_2001_01'));
    expect(await partitionsOf('postings', [credited])).toEqual(Array(2).fill('postings_2001_02'));
    expect(await partitionsOf('wallet_transactions', [transferred, credited])).toEqual([
      ...Array(2).fill('wallet_transactions_2001_01'),
      'wallet_transactions_2001_02',
    ]);
    expect([await balance(app, walletA), await balance(app, walletB)]).toEqual(['900.0000', '150.0000']);
    expect(await ledgerViolations(app)).toEqual([]);

    expect(await statementRows(walletB, '2001-01-01', '2001-02-28')).toEqual({
      opening: '0',
      rows: [
        ['2001-01-31T23:59:59.999Z', null, '100.0000', '100.0000'],
        ['2001-02-01T00:00:00.000Z', null, '50.0000', '150.0000'],
      ],
    });
    // February alone opens on January's closing balance, read from the other partition.
    expect(await statementRows(walletB, '2001-02-01', '2001-02-28')).toEqual({
      opening: '100',
      rows: [['2001-02-01T00:00:00.000Z', null, '50.0000', '150.0000']],
    });
  });

  it("prunes a statement period's postings to the months it spans", async () => {
    const { rows } = await db.query<{ 'QUERY PLAN': unknown }>(
      `EXPLAIN (FORMAT JSON) SELECT min(account_seq), max(account_seq) FROM postings
        WHERE client_id = gen_random_uuid() AND account_id = gen_random_uuid() AND created_at >= '2001-02-01Z' AND created_at < '2001-03-01Z'`,
    );
    const scanned = [...JSON.stringify(rows[0]['QUERY PLAN']).matchAll(/"Relation Name":"(\w+)"/g)].map((m) => m[1]);
    expect([...new Set(scanned)]).toEqual(['postings_2001_02']);
  });

  it('moves rows that landed in DEFAULT into their month when it is created', async () => {
    const [credited] = (await entriesOf(walletB)).slice(-1);
    await bookAt([credited], '2001-06-10T08:00:00Z'); // no June partition: DEFAULT
    expect(await partitionsOf('postings', [credited])).toEqual(['postings_default', 'postings_default']);
    expect(await ledgerViolations(app)).toEqual([]);

    const created = await ensurePartitions(db, new Date('2001-05-15T00:00:00Z'));
    expect(created.filter((p) => p.moved > 0).map((p) => [p.partition, p.moved])).toEqual([
      ['postings_2001_06', 2],
      ['wallet_transactions_2001_06', 1],
    ]);
    expect(await partitionsOf('postings', [credited])).toEqual(['postings_2001_06', 'postings_2001_06']);
    expect(await partitionsOf('wallet_transactions', [credited])).toEqual(['wallet_transactions_2001_06']);
    expect(await balance(app, walletB)).toBe('150.0000');
    expect(await ledgerViolations(app)).toEqual([]);
  });

  it('archives the months before the one given into schema archive, balances and statements still right', async () => {
    const entriesA = await entriesOf(walletA);
    const detached = await archiveHistory(db, parseMonth('2001-02')!);
    expect(detached.map((p) => p.partition).sort()).toEqual(HISTORY_TABLES.map((table) => `archive.${table}_2001_01`));

    // The table no longer returns January's rows; the detached table still holds them, for export.
    expect(await partitionsOf('postings', entriesA)).toEqual([]);
    const { rows: exported } = await db.query(`SELECT count(*)::int AS n FROM archive.postings_2001_01 WHERE entry_id = ANY ($1)`, [
      entriesA,
    ]);
    expect(exported[0].n).toBe(4); // the funding's two postings and the transfer's two
    expect([await balance(app, walletA), await balance(app, walletB)]).toEqual(['900.0000', '150.0000']);
    expect(await ledgerViolations(app)).toEqual([]);

    // A statement after the archived months opens on their balance; one of them has nothing left to show.
    expect(await statementRows(walletB, '2001-06-01', '2001-06-30')).toEqual({
      opening: '100',
      rows: [['2001-06-10T08:00:00.000Z', null, '50.0000', '150.0000']],
    });
    expect((await statement(walletB, '2001-01-01', '2001-01-31')).status).toBe(400);
    expect(await archiveHistory(db, parseMonth('2001-02')!)).toEqual([]);
  });

  it('refuses to archive the current month', async () => {
    const next = addMonths(monthOf(new Date()), 1);
    await expect(archiveHistory(db, next)).rejects.toThrow(ArchiveRefused);
    await expect(archiveHistory(db, next)).rejects.toThrow(`${formatMonth(monthOf(new Date()))} is the current month`);
    const attached = (await monthPartitions(db, 'postings')).map((p) => p.name);
    expect(attached).toContain(partitionName('postings', monthOf(new Date())));
    expect(attached).toContain('postings_2001_02');
  });

  it('refuses to archive a month before an unresolved float hold', async () => {
    await db.query('BEGIN'); // never committed: no other test sees the hold
    try {
      const account = (await db.query(`SELECT id FROM ledger_accounts WHERE account_number = $1`, [walletA])).rows[0].id;
      const entry = (
        await db.query(`INSERT INTO journal_entries (client_id, kind) VALUES ($1, 'FLOAT_RESERVE') RETURNING id`, [tenant.clientId])
      ).rows[0].id;
      const reservation = (
        await db.query(
          `INSERT INTO float_reservations (client_id, float_account_id, rail, currency, reserve_entry_id)
           VALUES ($1, $2, 'IN_FLIGHT_MOBILE_MONEY', 'KES', $3) RETURNING id`,
          [tenant.clientId, account, entry],
        )
      ).rows[0].id;
      const hold = (
        await db.query(
          `INSERT INTO float_holds (reservation_id, client_id, float_account_id, amount, fee, created_at)
           VALUES ($1, $2, $3, 10, 0, '2001-03-10Z') RETURNING id`,
          [reservation, tenant.clientId, account],
        )
      ).rows[0].id;
      await expect(archiveHistory(db, parseMonth('2001-04')!)).rejects.toThrow(
        `float hold ${hold} of 2001-03 is unresolved: --before is 2001-03 at the latest`,
      );
      expect((await monthPartitions(db, 'postings')).map((p) => p.name)).toContain('postings_2001_03');
    } finally {
      await db.query('ROLLBACK');
    }
  });

  it('runs both from the operator CLI', async () => {
    const cli = (...args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
        execFile(
          process.execPath,
          [CLI, ...args],
          { env: { ...process.env, LOG_LEVEL: 'silent' }, timeout: 90_000 },
          (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
        ),
      );
    const ensured = await cli('partitions:ensure', '--json');
    expect(ensured.code).toBe(0);
    expect(JSON.parse(ensured.stdout)).toEqual({ created: 'nothing to create' });

    const current = formatMonth(monthOf(new Date()));
    const refused = await cli('partitions:archive', '--before', formatMonth(addMonths(monthOf(new Date()), 1)), '--json');
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(
      `error: ${current} is the current month and cannot be archived: --before is ${current} at the latest`,
    );
    expect((await cli('partitions:archive', '--before', '2001-13')).stderr).toContain('--before must be a month, YYYY-MM');
  });
});
