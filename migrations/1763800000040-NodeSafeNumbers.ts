import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Account numbers and codes stay unique and in their documented formats whichever node makes the row. On Citus a
 * worker's copy of a bigint sequence counts from group << 48 (group 2 gives 562949953421313), and
 * `'1' || lpad(v, 10, '0')` kept the first 10 of its 15 digits, so a second account made on that worker got the
 * number of the first. Each default now takes its value modulo 2^48 - 10^8: for v = group * 2^48 + n that is
 * group * 10^8 + n, the node's group in the digits above the eighth and its own count below, as long as each node
 * makes fewer than 10^8 of them. On one node (group 0) every value is what it was.
 */
const FOLD = '281474876710656'; // 2^48 - 10^8

const DEFAULTS = [
  {
    table: 'ledger_accounts',
    column: 'account_number',
    now: `'1' || lpad((nextval('ledger_account_number_seq') % ${FOLD})::text, 10, '0')`,
  },
  { table: 'account_types', column: 'code', now: `'AT' || (nextval('account_type_code_seq') % ${FOLD})::text` },
  { table: 'client_services', column: 'code', now: `'CS' || (nextval('client_service_code_seq') % ${FOLD})::text` },
];
const BEFORE: Record<string, string> = {
  ledger_accounts: `'1' || lpad(nextval('ledger_account_number_seq')::text, 10, '0')`,
  account_types: `'AT' || nextval('account_type_code_seq')::text`,
  client_services: `'CS' || nextval('client_service_code_seq')::text`,
};

export class NodeSafeNumbers1763800000040 implements MigrationInterface {
  name = 'NodeSafeNumbers1763800000040';

  async up(q: QueryRunner): Promise<void> {
    for (const d of DEFAULTS) await q.query(`ALTER TABLE ${d.table} ALTER COLUMN ${d.column} SET DEFAULT ${d.now}`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const d of DEFAULTS) await q.query(`ALTER TABLE ${d.table} ALTER COLUMN ${d.column} SET DEFAULT ${BEFORE[d.table]}`);
  }
}
