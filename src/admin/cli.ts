import 'reflect-metadata';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { getDataSourceToken } from '@nestjs/typeorm';
import { Command, CommanderError } from 'commander';
import { DataSource } from 'typeorm';
import { ApiKeysService } from '../auth/gateway/api-keys.service';
import { generatePassword, UsersService } from '../auth/users.service';
import { CALLBACK_KINDS, CallbackSettingsService, isCallbackKind } from '../clients/callback-settings.service';
import Decimal from 'decimal.js';
import { ClientServicesService } from '../client-services/client-services.service';
import { ClientsService } from '../clients/clients.service';
import { isCurrency } from '../common/currencies';
import { amountProblem, Money } from '../common/money';
import { FxService } from '../fx/fx.service';
import { MoneyMovementsService } from '../transactions/money-movements.service';
import { PayoutSettlementService } from '../payouts/payout-settlement.service';
import { AirtimeProcessingService } from '../airtime/airtime-processing.service';
import { recipientResult } from '../airtime/airtime';
import { loadConfig } from '../infra/config/app-config';
import { verifyLedger } from '../ledger/ledger-invariants';
import { AdminModule } from './admin.module';
import { databaseProblem } from './database-check';
import { SeedService } from './seed.service';
import { RailRequestsRepository } from '../rails/rail-requests.repository';
import type { PoolClient } from 'pg';
import { ensurePartitions, parseMonth } from '../infra/database/partitions';
import { pgPool } from '../infra/database/prepared';
import { ArchiveRefused, archiveHistory } from './history-archive';

/** A failure the operator can act on: printed as one line on stderr, exit code 1. */
class CliError extends Error {}

type Output = Record<string, unknown>;

/**
 * `npm run admin -- <command> [--json]`. With --json every command prints exactly one JSON object on stdout
 * (provider contract §8); without it, the same facts as readable lines.
 */
export function buildProgram(run: (action: (app: INestApplicationContext) => Promise<Output>, json: boolean) => Promise<void>): Command {
  const program = new Command('admin').description('Operator commands for the payments provider').exitOverride();
  const json = (cmd: Command) => Boolean(cmd.optsWithGlobals().json);
  program.option('--json', 'print one JSON object on stdout');

  program
    .command('client:create')
    .description('create a client (merchant)')
    .requiredOption('--code <code>', 'unique client code')
    .requiredOption('--name <name>', 'client name')
    .action((opts, cmd) =>
      run(async (app) => {
        requireText('code', opts.code, 32);
        requireText('name', opts.name, 100);
        const client = await app.get(ClientsService).create(opts.code, opts.name);
        return { client_id: client.id, client_code: client.code, client_name: client.name };
      }, json(cmd)),
    );

  program
    .command('user:create')
    .description("create a wallet-service user for a client, or with --password reset an existing user's password; prints it once")
    .requiredOption('--client <code>', 'client code')
    .requiredOption('--username <username>', 'login name')
    .option('--password <password>', 'password (generated when omitted); given for an existing user of the client, resets it')
    .action((opts, cmd) =>
      run(async (app) => {
        requireText('username', opts.username, 100);
        const client = await requireClient(app, opts.client);
        const password = opts.password ?? generatePassword();
        if (password.length < 8) throw new CliError('password must be at least 8 characters');
        // A reset invalidates the user's wallet tokens; without --password an existing username is an error.
        const users = app.get(UsersService);
        const user =
          opts.password === undefined
            ? await users.create(client.id, opts.username, password)
            : await users.upsert(client.id, opts.username, password);
        return { user_id: user.id, client_code: client.code, username: user.username, password };
      }, json(cmd)),
    );

  program
    .command('ledger:verify')
    .description('check the ledger invariants (a)-(d); exits non-zero on any violation')
    .action((_opts, cmd) =>
      run(async (app) => {
        const results = await verifyLedger(app.get<DataSource>(getDataSourceToken()).manager);
        const ok = results.every((r) => r.violations.length === 0);
        const output = {
          ok,
          invariants: results.map((r) => ({
            name: r.name,
            description: r.description,
            violations: r.violations.length,
            examples: r.violations.slice(0, 5),
          })),
        };
        if (!ok) throw Object.assign(new CliError('ledger invariants violated'), { output });
        return output;
      }, json(cmd)),
    );

  program
    .command('wallet:fund')
    .description("credit a wallet from its client's settlement account (an EXTERNAL_CREDIT with no fee)")
    .requiredOption('--account <number>', 'wallet account number')
    .requiredOption('--amount <amount>', 'amount in the wallet currency')
    .action((opts, cmd) =>
      run(async (app) => {
        const amount = requireAmount('amount', opts.amount);
        const [wallet] = await app
          .get<DataSource>(getDataSourceToken())
          .query(`SELECT client_id FROM ledger_accounts WHERE account_number = $1 AND kind = 'WALLET'`, [opts.account]);
        if (!wallet) throw new CliError(`wallet ${opts.account} not found`);
        return app.get(MoneyMovementsService).fund(wallet.client_id, opts.account, amount);
      }, json(cmd)),
    );

  program
    .command('fx:set')
    .description('set the buying and selling price of one unit of a currency in a base currency')
    .requiredOption('--base <code>', 'base currency, e.g. KES')
    .requiredOption('--currency <code>', 'quoted currency, e.g. USD')
    .requiredOption('--buying <rate>', 'price at which we buy one unit')
    .requiredOption('--selling <rate>', 'price at which we sell one unit')
    .action((opts, cmd) =>
      run(async (app) => {
        for (const code of [opts.base, opts.currency]) if (!isCurrency(code)) throw new CliError(`${code} is not a supported currency`);
        const buying = requireRate('buying', opts.buying);
        const selling = requireRate('selling', opts.selling);
        await app.get(FxService).setRate(opts.base, opts.currency, buying, selling, 'admin');
        return { base_currency: opts.base, currency: opts.currency, buying: buying.toFixed(), selling: selling.toFixed() };
      }, json(cmd)),
    );

  program
    .command('service:settlement')
    .description('set the wallet a client service settles collections into and pays payouts from')
    .requiredOption('--service <code>', 'client service code')
    .requiredOption('--account <number>', 'wallet account number of the same client')
    .action((opts, cmd) =>
      run(async (app) => {
        const db = app.get<DataSource>(getDataSourceToken());
        const [service] = await db.query(`SELECT client_id FROM client_services WHERE code = $1`, [opts.service]);
        if (!service) throw new CliError(`client service ${opts.service} not found`);
        const [wallet] = await db.query(`SELECT id FROM ledger_accounts WHERE account_number = $1 AND client_id = $2 AND kind = 'WALLET'`, [
          opts.account,
          service.client_id,
        ]);
        if (!wallet) throw new CliError(`wallet ${opts.account} not found for the service's client`);
        await app.get(ClientServicesService).setSettlementWallet(db.manager, service.client_id, opts.service, wallet.id);
        return { service_code: opts.service, settlement_account_number: opts.account };
      }, json(cmd)),
    );

  program
    .command('service:partner-add')
    .description('make a wallet a mandatory split-settlement partner of a client service')
    .requiredOption('--service <code>', 'client service code')
    .requiredOption('--account <number>', 'partner wallet account number of the same client')
    .action((opts, cmd) =>
      run(async (app) => {
        const db = app.get<DataSource>(getDataSourceToken());
        const [service] = await db.query(`SELECT id, client_id FROM client_services WHERE code = $1`, [opts.service]);
        if (!service) throw new CliError(`client service ${opts.service} not found`);
        const [wallet] = await db.query(`SELECT id FROM ledger_accounts WHERE account_number = $1 AND client_id = $2 AND kind = 'WALLET'`, [
          opts.account,
          service.client_id,
        ]);
        if (!wallet) throw new CliError(`wallet ${opts.account} not found for the service's client`);
        await db.query(`INSERT INTO client_service_partners (client_service_id, account_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [
          service.id,
          wallet.id,
        ]);
        const partners = await db.query(
          `SELECT a.account_number FROM client_service_partners p JOIN ledger_accounts a ON a.id = p.account_id
           WHERE p.client_service_id = $1 ORDER BY a.account_number`,
          [service.id],
        );
        return {
          service_code: opts.service,
          mandatory_partner_accounts: partners.map((p: { account_number: string }) => p.account_number),
        };
      }, json(cmd)),
    );

  program
    .command('api-key:create')
    .description('issue a gateway API key for a client; prints the consumer secret once')
    .requiredOption('--client <code>', 'client code')
    .action((opts, cmd) =>
      run(async (app) => {
        const client = await requireClient(app, opts.client);
        return { client_code: client.code, ...(await app.get(ApiKeysService).issue(client.id)) };
      }, json(cmd)),
    );

  program
    .command('api-key:list')
    .description("list a client's API keys (no secrets), newest first")
    .requiredOption('--client <code>', 'client code')
    .action((opts, cmd) =>
      run(async (app) => {
        const client = await requireClient(app, opts.client);
        return { client_code: client.code, api_keys: await app.get(ApiKeysService).list(client.id) };
      }, json(cmd)),
    );

  program
    .command('api-key:revoke')
    .description('revoke an API key: it and every token issued for it are refused from now on')
    .requiredOption('--client <code>', 'client code')
    .requiredOption('--key <consumer_key>', 'the consumer key to revoke')
    .action((opts, cmd) =>
      run(async (app) => {
        const client = await requireClient(app, opts.client);
        const revoked = await app.get(ApiKeysService).revoke(client.id, opts.key);
        if (!revoked) throw new CliError(`API key ${opts.key} not found for client ${client.code}`);
        return { client_code: client.code, consumer_key: revoked.consumer_key, revoked_at: revoked.revoked_at };
      }, json(cmd)),
    );

  program
    .command('callback:set')
    .description("set a client's callback URL for one kind of event and the Basic-auth credentials we present to it")
    .requiredOption('--client <code>', 'client code')
    .requiredOption('--url <url>', 'callback URL (HTTPS; http:// to loopback hosts and host.docker.internal in sandbox)')
    .requiredOption('--username <username>', 'Basic-auth username')
    .requiredOption('--password <password>', 'Basic-auth password')
    .option('--kind <kind>', `which callbacks go to this URL: ${CALLBACK_KINDS.join(', ')}`, 'collections')
    .action((opts, cmd) =>
      run(async (app) => {
        if (!isCallbackKind(opts.kind)) throw new CliError(`--kind must be one of ${CALLBACK_KINDS.join(', ')}`);
        const client = await requireClient(app, opts.client);
        requireText('username', opts.username, 100);
        await app
          .get(CallbackSettingsService)
          .setEndpoint(client.id, opts.kind, { url: opts.url, username: opts.username, password: opts.password });
        return { client_code: client.code, callback_url: opts.url, callback_username: opts.username };
      }, json(cmd)),
    );

  program
    .command('payout:resolve')
    .description("settle (SUCCESSFUL) or return to the float (FAILED) a pending or jammed payout's hold, and send its callback")
    .requiredOption('--client <code>', 'client code')
    .requiredOption('--reference <reference>', 'payout_reference of a local payout, IMT or B2B payout')
    .requiredOption('--status <status>', 'SUCCESSFUL or FAILED')
    .action((opts, cmd) =>
      run(async (app) => {
        if (opts.status !== 'SUCCESSFUL' && opts.status !== 'FAILED') throw new CliError('--status must be SUCCESSFUL or FAILED');
        const client = await requireClient(app, opts.client);
        const payout = await app.get(PayoutSettlementService).resolveByOperator(client.id, opts.reference, opts.status);
        const [hold] = await app
          .get<DataSource>(getDataSourceToken())
          .query(`SELECT status, outcome_entry_id FROM float_holds WHERE id = $1`, [payout.hold_id]);
        return {
          client_code: client.code,
          payout_reference: payout.payout_reference,
          payment_status: payout.status,
          result_description: payout.result_description,
          hold_status: hold.status,
          entry_id: String(hold.outcome_entry_id),
        };
      }, json(cmd)),
    );

  program
    .command('airtime:resolve')
    .description("send (SUCCESSFUL) or return to the float (FAILED) a processing or jammed airtime recipient's hold, and send its callback")
    .requiredOption('--client <code>', 'client code')
    .requiredOption('--reference <reference>', "the airtime request's reference")
    .requiredOption('--phone <number>', "the recipient's phone number")
    .requiredOption('--status <status>', 'SUCCESSFUL or FAILED')
    .action((opts, cmd) =>
      run(async (app) => {
        if (opts.status !== 'SUCCESSFUL' && opts.status !== 'FAILED') throw new CliError('--status must be SUCCESSFUL or FAILED');
        const client = await requireClient(app, opts.client);
        const recipient = await app.get(AirtimeProcessingService).resolveByOperator(client.id, opts.reference, opts.phone, opts.status);
        return { client_code: client.code, ...recipientResult(recipient) };
      }, json(cmd)),
    );

  program
    .command('rails:status')
    .description("requests at the operators without a final answer, per rail, operation and state: how many, and the oldest one's age")
    .action((_opts, cmd) =>
      run(async (app) => {
        const rows = await app.get(RailRequestsRepository).inFlight();
        return { in_flight: rows.length ? rows : 'nothing in flight' };
      }, json(cmd)),
    );

  program
    .command('partitions:ensure')
    .description("create the history tables' partitions of this month and the next 3, and of any month with rows in DEFAULT; idempotent")
    .action((_opts, cmd) =>
      run(async (app) => {
        const created = await withConnection(app, (db) => ensurePartitions(db));
        return { created: created.length ? created : 'nothing to create' };
      }, json(cmd)),
    );

  program
    .command('partitions:archive')
    .description(
      'detach the history months before the given one into schema archive, for export; refuses the current month and months with unresolved holds',
    )
    .requiredOption('--before <month>', 'YYYY-MM: every month before it is detached')
    .action((opts, cmd) =>
      run(async (app) => {
        const before = parseMonth(opts.before);
        if (!before) throw new CliError('--before must be a month, YYYY-MM');
        try {
          const detached = await withConnection(app, (db) => archiveHistory(db, before));
          return { detached: detached.length ? detached : 'nothing to detach' };
        } catch (error) {
          throw error instanceof ArchiveRefused ? new CliError(error.message) : error;
        }
      }, json(cmd)),
    );

  program
    .command('seed')
    .description('create or reuse a demo merchant with credentials, service and funded wallets; idempotent')
    .option('--client-code <code>', 'client code', 'DEMO')
    .option('--callback-url <url>', 'merchant callback URL')
    .option('--callback-username <username>', 'Basic-auth username we send to the merchant')
    .option('--callback-password <password>', 'Basic-auth password we send to the merchant')
    .action((opts, cmd) =>
      run(async (app) => {
        const callbackFlags = [opts.callbackUrl, opts.callbackUsername, opts.callbackPassword].filter((v) => v !== undefined).length;
        if (callbackFlags !== 0 && callbackFlags !== 3) {
          throw new CliError('--callback-url, --callback-username and --callback-password go together');
        }
        const callback =
          callbackFlags === 3 ? { url: opts.callbackUrl, username: opts.callbackUsername, password: opts.callbackPassword } : undefined;
        return app.get(SeedService).seed({ clientCode: opts.clientCode, callback });
      }, json(cmd)),
    );

  return program;
}

function requireAmount(name: string, value: string): Decimal {
  const problem = amountProblem(value);
  if (problem) throw new CliError(`--${name} ${problem}`);
  return new Money(value);
}

function requireRate(name: string, value: string): Decimal {
  if (!/^\d+(\.\d{1,8})?$/.test(value) || new Money(value).lte(0))
    throw new CliError(`--${name} must be a positive rate with at most 8 decimals`);
  return new Money(value);
}

function requireText(name: string, value: string, max: number): void {
  if (!value.trim() || value.length > max) throw new CliError(`--${name} must be 1 to ${max} characters`);
}

/** One pooled connection for the time of `work`: partition DDL runs its own transactions on it. */
async function withConnection<T>(app: INestApplicationContext, work: (db: PoolClient) => Promise<T>): Promise<T> {
  const db = await pgPool(app.get<DataSource>(getDataSourceToken())).connect();
  try {
    return await work(db);
  } finally {
    db.release();
  }
}

async function requireClient(app: INestApplicationContext, code: string) {
  const client = await app.get(ClientsService).findByCode(code);
  if (!client) throw new CliError(`client ${code} not found`);
  return client;
}

async function main(argv: string[]): Promise<number> {
  let exitCode = 0;
  const program = buildProgram(async (action, json) => {
    let app: INestApplicationContext;
    try {
      const problem = await databaseProblem(loadConfig().databaseUrl);
      if (problem) throw new CliError(problem);
      app = await NestFactory.createApplicationContext(AdminModule, { logger: false, abortOnError: false });
    } catch (error) {
      process.stderr.write(`${oneLine(error)}\n`);
      exitCode = 1;
      return;
    }
    try {
      const output = await action(app);
      process.stdout.write(json ? `${JSON.stringify(output)}\n` : humanReadable(output));
    } catch (error) {
      const output = (error as { output?: Output }).output;
      if (output) process.stdout.write(json ? `${JSON.stringify(output)}\n` : humanReadable(output));
      process.stderr.write(`${oneLine(error)}\n`);
      exitCode = 1;
    } finally {
      await app.close();
    }
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 1;
    process.stderr.write(`${oneLine(error)}\n`);
    return 1;
  }
  return exitCode;
}

function humanReadable(output: Output): string {
  return Object.entries(output)
    .map(([key, value]) => `${key}: ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`)
    .join('\n')
    .concat('\n');
}

function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return `error: ${message.replace(/\s+/g, ' ')}`;
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => process.exit(code));
}
