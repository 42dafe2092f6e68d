import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import request from 'supertest';
import { createTestApp, dataSource, uniqueCode } from '../support/test-app';

const CLI = join(__dirname, '..', '..', 'dist', 'src', 'admin', 'cli.js');

// Every CLI call boots a Node process with the Nest application context; on a loaded 2-core machine a test of
// several calls can take a while.
jest.setTimeout(180_000);

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the compiled operator CLI (as `npm run admin` does) against the run's database. */
function cli(...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...process.env, DATABASE_URL: process.env.DATABASE_URL, LOG_LEVEL: 'silent' }, timeout: 90_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** With --json: exactly one JSON object on stdout, nothing else. */
function singleJsonObject(stdout: string): Record<string, unknown> {
  const lines = stdout.split('\n').filter((line) => line.length > 0);
  expect(lines).toHaveLength(1);
  const parsed = JSON.parse(lines[0]);
  expect(parsed).toEqual(expect.any(Object));
  expect(Array.isArray(parsed)).toBe(false);
  return parsed;
}

/** An error: non-zero exit and one line on stderr. */
function expectOneLineError(result: CliResult, mentions?: string) {
  expect(result.code).not.toBe(0);
  const lines = result.stderr.split('\n').filter((line) => line.trim().length > 0);
  expect(lines).toHaveLength(1);
  if (mentions) expect(lines[0]).toContain(mentions);
}

describe('admin CLI (provider contract §8)', () => {
  let app: NestFastifyApplication;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => (app = await createTestApp()));
  afterAll(async () => app.close());

  describe('client:create', () => {
    it('--json prints one JSON object with the new client, which exists', async () => {
      const code = uniqueCode('CLI');
      const result = await cli('client:create', '--code', code, '--name', 'Acme Traders Ltd', '--json');
      expect(result.code).toBe(0);
      const output = singleJsonObject(result.stdout);
      expect(output).toEqual({ client_id: expect.any(String), client_code: code, client_name: 'Acme Traders Ltd' });
      const rows = await dataSource(app).query('SELECT id, code, name FROM clients WHERE code = $1', [code]);
      expect(rows).toEqual([{ id: output.client_id, code, name: 'Acme Traders Ltd' }]);
    });

    it('--json also works before the command name', async () => {
      const code = uniqueCode('CLI');
      const result = await cli('--json', 'client:create', '--code', code, '--name', 'Before');
      expect(result.code).toBe(0);
      expect(singleJsonObject(result.stdout).client_code).toBe(code);
    });

    it('without --json prints readable lines, not JSON', async () => {
      const code = uniqueCode('CLI');
      const result = await cli('client:create', '--code', code, '--name', 'Readable');
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`client_code: ${code}`);
      expect(() => JSON.parse(result.stdout)).toThrow();
    });

    it('a duplicate code exits non-zero with one line on stderr, nothing on stdout, and no second client', async () => {
      const code = uniqueCode('CLI');
      expect((await cli('client:create', '--code', code, '--name', 'First', '--json')).code).toBe(0);
      const result = await cli('client:create', '--code', code, '--name', 'Second', '--json');
      expectOneLineError(result, code);
      expect(result.stdout).toBe('');
      const rows = await dataSource(app).query('SELECT name FROM clients WHERE code = $1', [code]);
      expect(rows).toEqual([{ name: 'First' }]);
    });

    it.each([
      ['a missing --name', ['client:create', '--code', 'NONAME1', '--json']],
      ['a code over 32 characters', ['client:create', '--code', 'C'.repeat(33), '--name', 'Too long', '--json']],
      ['an unknown command', ['client:destroy', '--code', 'X', '--json']],
    ])('%s exits non-zero with one line on stderr', async (_name, args) => {
      const result = await cli(...args);
      expectOneLineError(result);
      expect(result.stdout).toBe('');
    });
  });

  describe('user:create', () => {
    it('generates a password when none is given, prints it once, and it logs in', async () => {
      const code = uniqueCode('CLI');
      expect((await cli('client:create', '--code', code, '--name', 'Users Ltd', '--json')).code).toBe(0);
      const username = `ops-${code.toLowerCase()}`;
      const result = await cli('user:create', '--client', code, '--username', username, '--json');
      expect(result.code).toBe(0);
      const output = singleJsonObject(result.stdout);
      expect(output).toEqual({ user_id: expect.any(String), client_code: code, username, password: expect.any(String) });
      expect((output.password as string).length).toBeGreaterThanOrEqual(16);

      const [stored] = await dataSource(app).query('SELECT password_hash FROM users WHERE username = $1', [username]);
      expect(stored.password_hash).not.toContain(output.password as string);
      const login = await http().post('/api/v1/auth/login').send({ username, password: output.password }).expect(200);
      expect(login.body.token_type).toBe('Bearer');
      // The token acts for the client named on the command line.
      const listed = await http().get('/api/v1/account-types').set('authorization', `Bearer ${login.body.access_token}`).expect(200);
      expect(listed.body.metadata.total_count).toBe(0);

      // A second generated password is a different one.
      const second = singleJsonObject((await cli('user:create', '--client', code, '--username', `${username}-2`, '--json')).stdout);
      expect(second.password).not.toBe(output.password);
    });

    it('uses --password when given', async () => {
      const code = uniqueCode('CLI');
      expect((await cli('client:create', '--code', code, '--name', 'Chosen', '--json')).code).toBe(0);
      const username = `chosen-${code.toLowerCase()}`;
      const result = await cli('user:create', '--client', code, '--username', username, '--password', 'a chosen passphrase', '--json');
      expect(result.code).toBe(0);
      expect(singleJsonObject(result.stdout).password).toBe('a chosen passphrase');
      await http().post('/api/v1/auth/login').send({ username, password: 'a chosen passphrase' }).expect(200);
    });

    it('an unknown client, a duplicate username and a short password each exit non-zero with one stderr line', async () => {
      const code = uniqueCode('CLI');
      expect((await cli('client:create', '--code', code, '--name', 'Errors', '--json')).code).toBe(0);
      const username = `dup-${code.toLowerCase()}`;
      expectOneLineError(await cli('user:create', '--client', 'NO-SUCH-CLIENT', '--username', `x-${code}`, '--json'), 'NO-SUCH-CLIENT');
      expect((await cli('user:create', '--client', code, '--username', username, '--json')).code).toBe(0);
      const duplicate = await cli('user:create', '--client', code, '--username', username, '--json');
      expectOneLineError(duplicate, username);
      expect(duplicate.stdout).toBe('');
      expectOneLineError(await cli('user:create', '--client', code, '--username', `short-${code}`, '--password', 'short', '--json'));
      const [{ n }] = await dataSource(app).query(
        `SELECT count(*)::int AS n FROM users u JOIN clients c ON c.id = u.client_id WHERE c.code = $1`,
        [code],
      );
      expect(n).toBe(1);
    });
  });

  describe('ledger:verify', () => {
    it('--json reports ok:true with each invariant (a)-(e) and zero violations', async () => {
      const result = await cli('ledger:verify', '--json');
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
      const output = singleJsonObject(result.stdout);
      expect(output.ok).toBe(true);
      const invariants = output.invariants as Array<{ name: string; violations: number }>;
      expect(invariants.map((i) => i.name)).toEqual([
        'a_entries_balance',
        'b_balances_match_postings',
        'c_no_debit_below_floor',
        'd_one_entry_per_business_record',
        'e_postings_numbered_per_account',
      ]);
      for (const invariant of invariants) expect(invariant.violations).toBe(0);
    });
  });
});
